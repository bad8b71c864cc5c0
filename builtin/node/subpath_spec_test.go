package node_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Volume subPath and subPathExpr", func() {
	// mountDir is a fresh host path for the container's mount points (the
	// process runtime creates them in its private mount namespace).
	mountDir := func() string {
		GinkgoHelper()
		d := filepath.Join(os.TempDir(), fmt.Sprintf("cv-subpath-%d-%d", os.Getpid(), time.Now().UnixNano()))
		DeferCleanup(func() { _ = os.RemoveAll(d) })
		return d
	}
	emptyDir := []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	// annotatedPod is the upstream spec's pod: the emptyDir mounted whole at
	// d/vol and at d/sub through subPathExpr $(ANNOTATION)/$(POD_NAME), where
	// POD_NAME is foo and ANNOTATION the pod's annotation mysubpath.
	annotatedPod := func(name, d string, annotations map[string]string, script ...string) *corev1.Pod {
		pod := &corev1.Pod{}
		pod.Name, pod.Annotations = name, annotations
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Volumes = emptyDir
		c := helperContainer("main", script...)
		c.Env = []corev1.EnvVar{{Name: "POD_NAME", Value: "foo"}, {Name: "ANNOTATION", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['mysubpath']"}}}}
		c.VolumeMounts = []corev1.VolumeMount{
			{Name: "work", MountPath: d + "/sub", SubPathExpr: "$(ANNOTATION)/$(POD_NAME)"},
			{Name: "work", MountPath: d + "/vol"},
		}
		pod.Spec.Containers = []corev1.Container{c}
		return pod
	}

	waitingReason := func(ctx SpecContext, name string) func() (string, error) {
		return func() (string, error) {
			p, err := getPod(ctx, name)()
			if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
				return "", err
			}
			w := p.Status.ContainerStatuses[0].State.Waiting
			return w.Reason + ": " + w.Message, nil
		}
	}

	It("expands subPathExpr from the container's env, creates the directories, and writes through it land in the volume", func(ctx SpecContext) {
		d := mountDir()
		pod := annotatedPod("subpath-expr", d, map[string]string{"mysubpath": "mypath"}, "write", d+"/sub/test.log", "through-subpath",
			"cat", d+"/vol/mypath/foo/test.log", "write", d+"/vol/mypath/foo/back.log", "through-volume", "cat", d+"/sub/back.log")
		createAndBind(ctx, pod)
		Eventually(func() (corev1.PodPhase, error) {
			p, err := getPod(ctx, pod.Name)()
			return p.Status.Phase, err
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal(corev1.PodSucceeded))
		out, err := podLogs(ctx, pod.Name, "main", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(strings.TrimSpace(out), "\n")).To(Equal([]string{"through-subpath", "through-volume"}))
	}, SpecTimeout(40*time.Second))

	It("mounts a subPath of a configMap volume as the single file", func(ctx SpecContext) {
		d := mountDir()
		cm := &corev1.ConfigMap{Data: map[string]string{"key": "value-1"}}
		cm.Name, cm.Namespace = "subpath-cm", "default"
		Expect(suite.c.Create(ctx, cm)).To(Succeed())
		pod := &corev1.Pod{}
		pod.Name = "subpath-file"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Volumes = []corev1.Volume{{Name: "cm", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}
		c := helperContainer("main", "cat", d+"/file")
		c.VolumeMounts = []corev1.VolumeMount{{Name: "cm", MountPath: d + "/file", SubPath: "key"}}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		Eventually(func() (corev1.PodPhase, error) {
			p, err := getPod(ctx, pod.Name)()
			return p.Status.Phase, err
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal(corev1.PodSucceeded))
		Expect(podLogs(ctx, pod.Name, "main", "")).To(Equal("value-1\n"))
	}, SpecTimeout(40*time.Second))

	DescribeTable("fails the container with CreateContainerConfigError when the expanded path",
		func(ctx SpecContext, name, value, message string) {
			pod := &corev1.Pod{}
			pod.Name = name
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			pod.Spec.Volumes = emptyDir
			c := helperContainer("main", "out", "started")
			c.Env = []corev1.EnvVar{{Name: "POD_NAME", Value: value}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "work", MountPath: "/logscontainer", SubPathExpr: "$(POD_NAME)"}}
			pod.Spec.Containers = []corev1.Container{c}
			createAndBind(ctx, pod)
			Eventually(waitingReason(ctx, name)).WithContext(ctx).WithTimeout(20 * time.Second).
				Should(Equal("CreateContainerConfigError: " + message))
			Consistently(func() (corev1.PodPhase, error) {
				p, err := getPod(ctx, name)()
				return p.Status.Phase, err
			}).WithContext(ctx).WithTimeout(time.Second).Should(Equal(corev1.PodPending))
		},
		Entry("is absolute", "subpath-absolute", "/tmp", "error SubPath `/tmp` must not be an absolute path"),
		Entry("backsteps", "subpath-backstep", "..", "unable to provision SubPath `..`: must not contain '..'"),
		Entry("uses an empty variable", "subpath-empty", "",
			`volume mount work: subPathExpr "$(POD_NAME)": missing value for POD_NAME`))

	It("retries a subPathExpr missing its variable until the pod is updated to define it", func(ctx SpecContext) {
		d := mountDir()
		pod := annotatedPod("subpath-later", d, map[string]string{"notmysubpath": "mypath"}, "write", d+"/sub/ok", "yes", "cat", d+"/vol/mypath/foo/ok")
		createAndBind(ctx, pod)
		Eventually(waitingReason(ctx, pod.Name)).WithContext(ctx).WithTimeout(20 * time.Second).
			Should(ContainSubstring("CreateContainerConfigError: volume mount work: subPathExpr \"$(ANNOTATION)/$(POD_NAME)\": missing value for ANNOTATION"))
		Eventually(func() error {
			p, err := getPod(ctx, pod.Name)()
			if err != nil {
				return err
			}
			p.Annotations["mysubpath"] = "mypath"
			return suite.c.Update(ctx, p)
		}).WithContext(ctx).Should(Succeed())
		Eventually(func() (corev1.PodPhase, error) {
			p := &corev1.Pod{}
			err := suite.c.Get(ctx, client.ObjectKeyFromObject(pod), p)
			return p.Status.Phase, err
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Equal(corev1.PodSucceeded))
		Expect(podLogs(ctx, pod.Name, "main", "")).To(Equal("yes\n"))
	}, SpecTimeout(60*time.Second))
})
