package node_test

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

var _ = Describe("Projected volume updates", func() {
	It("reach a running pod's configMap and downwardAPI files in the same (bind-mounted) directory; a deleted optional source's files go", func(ctx SpecContext) {
		cm := &corev1.ConfigMap{Data: map[string]string{"data-1": "value-1"}}
		cm.Name, cm.Namespace = "update-cm", "default"
		Expect(suite.c.Create(ctx, cm)).To(Succeed())
		opt := &corev1.ConfigMap{Data: map[string]string{"data-2": "value-2"}}
		opt.Name, opt.Namespace = "update-optional", "default"
		Expect(suite.c.Create(ctx, opt)).To(Succeed())

		pod := &corev1.Pod{}
		pod.Name, pod.Labels = "volume-updates", map[string]string{"key": "value1"}
		pod.Spec.TerminationGracePeriodSeconds = ptr(int64(1))
		pod.Spec.Volumes = []corev1.Volume{
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}},
			{Name: "opt", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: opt.Name}, Optional: ptr(true)}}},
			{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
				Items: []corev1.DownwardAPIVolumeFile{{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
		}
		pod.Spec.Containers = []corev1.Container{helperContainer("main", "out", "up", "sleep", "forever")}
		createAndBind(ctx, pod)
		Eventually(func() (string, error) { return podLogs(ctx, pod.Name, "main", "") }).WithContext(ctx).Should(ContainSubstring("up"))
		p, err := getPod(ctx, pod.Name)()
		Expect(err).NotTo(HaveOccurred())
		vol := func(name string) string { return filepath.Join(suite.root, "pods", p.UID, "volumes", name) }
		read := func(path string) func() (string, error) {
			return func() (string, error) { b, err := os.ReadFile(path); return string(b), err }
		}
		ino := func(path string) uint64 {
			var st syscall.Stat_t
			Expect(syscall.Stat(path, &st)).To(Succeed())
			return st.Ino
		}
		cmIno, podinfoIno := ino(vol("cm")), ino(vol("podinfo"))
		Expect(read(filepath.Join(vol("cm"), "data-1"))()).To(Equal("value-1"))
		Expect(read(filepath.Join(vol("podinfo"), "labels"))()).To(Equal(`key="value1"`))

		cm.Data["data-1"] = "value-2"
		Expect(suite.c.Update(ctx, cm)).To(Succeed())
		Expect(suite.c.Delete(ctx, opt)).To(Succeed())
		Eventually(func() error {
			cur, err := getPod(ctx, pod.Name)()
			if err != nil {
				return err
			}
			cur.Labels["key"] = "value2"
			return suite.c.Update(ctx, cur)
		}).WithContext(ctx).Should(Succeed())

		Eventually(read(filepath.Join(vol("cm"), "data-1"))).WithContext(ctx).WithTimeout(10 * time.Second).Should(Equal("value-2"))
		Eventually(read(filepath.Join(vol("podinfo"), "labels"))).WithContext(ctx).WithTimeout(10 * time.Second).Should(Equal(`key="value2"`))
		Eventually(func() bool {
			_, err := os.Stat(filepath.Join(vol("opt"), "data-2"))
			return os.IsNotExist(err)
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(BeTrue())
		Expect(ino(vol("cm"))).To(Equal(cmIno), "the directory a container bind-mounted is the one updated")
		Expect(ino(vol("podinfo"))).To(Equal(podinfoIno))
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
	}, SpecTimeout(60*time.Second))
})
