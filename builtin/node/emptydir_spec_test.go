package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

const tmpfsMagic = 0x01021994

var _ = Describe("emptyDir medium Memory", func() {
	It("is a tmpfs of mode 0777 (sized by sizeLimit) while the pod runs, unmounted when it goes", func(ctx SpecContext) {
		d := filepath.Join(os.TempDir(), "cv-emptydir-"+strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
		DeferCleanup(func() { _ = os.RemoveAll(d) })
		pod := &corev1.Pod{}
		pod.Name = "emptydir-memory"
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
		size := api.MustParseQuantity("8Mi")
		pod.Spec.Volumes = []corev1.Volume{{Name: "mem", VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size}}}}
		c := helperContainer("main", "write", d+"/file", "in-memory", "out", "written", "sleep", "forever")
		c.VolumeMounts = []corev1.VolumeMount{{Name: "mem", MountPath: d}}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, pod.Name, "main", "") }).WithContext(ctx).Should(ContainSubstring("written"))

		p, err := getPod(ctx, pod.Name)()
		Expect(err).NotTo(HaveOccurred())
		dir := filepath.Join(suite.root, "pods", p.UID, "volumes", "mem")
		var fs syscall.Statfs_t
		Expect(syscall.Statfs(dir, &fs)).To(Succeed())
		Expect(fs.Type).To(BeEquivalentTo(tmpfsMagic))
		Expect(uint64(fs.Blocks) * uint64(fs.Bsize)).To(BeEquivalentTo(8 << 20))
		fi, err := os.Stat(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(fi.Mode().Perm()).To(Equal(os.FileMode(0o777)))
		Expect(os.ReadFile(filepath.Join(dir, "file"))).To(Equal([]byte("in-memory")))

		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
		Eventually(func() (string, error) {
			b, err := os.ReadFile("/proc/self/mountinfo")
			return string(b), err
		}).WithContext(ctx).WithTimeout(20 * time.Second).ShouldNot(ContainSubstring(dir))
	}, SpecTimeout(60*time.Second))
})
