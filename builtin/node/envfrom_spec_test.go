package node_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

var _ = Describe("envFrom", func() {
	// The upstream ConfigMap/Secret "environment variable names with various
	// prefixes" specs: since Kubernetes 1.34 a name is any printable ASCII
	// but '=', so keys and prefixes a shell could not name are passed on.
	It("passes ConfigMap and Secret keys under names a shell cannot hold, with and without a prefix", func(ctx SpecContext) {
		cm := &corev1.ConfigMap{Data: map[string]string{"data-1": "value-1"}}
		cm.Name, cm.Namespace = "envfrom-cm", "default"
		Expect(suite.c.Create(ctx, cm)).To(Succeed())
		s := &corev1.Secret{Data: map[string][]byte{"data-2": []byte("value-2")}}
		s.Name, s.Namespace = "envfrom-secret", "default"
		Expect(suite.c.Create(ctx, s)).To(Succeed())
		pod := &corev1.Pod{}
		pod.Name = "envfrom-names"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		c := helperContainer("main", "env", "data-1", "env", "1-data-1", "env", "p.data-2", "env", "ABC_data-2")
		c.EnvFrom = []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}},
			{Prefix: "1-", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}},
			{Prefix: "p.", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}}},
			{Prefix: "ABC_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s.Name}}},
		}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		Eventually(func() (corev1.PodPhase, error) {
			p, err := getPod(ctx, pod.Name)()
			return p.Status.Phase, err
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal(corev1.PodSucceeded))
		out, err := podLogs(ctx, pod.Name, "main", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(strings.Split(strings.TrimSpace(out), "\n")).To(Equal([]string{
			"data-1=value-1", "1-data-1=value-1", "p.data-2=value-2", "ABC_data-2=value-2"}))
	}, SpecTimeout(40*time.Second))
})
