package node_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

var _ = Describe("Service environment variables", func() {
	It("are injected for the namespace's Services unless enableServiceLinks is false, and $(VAR) can use them", func(ctx SpecContext) {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "none"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}}}
		svc.Name, svc.Namespace = "env-svc", "default"
		Expect(suite.c.Create(ctx, svc)).To(Succeed())
		Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())

		script := []string{"env", "ENV_SVC_SERVICE_HOST", "env", "ENV_SVC_SERVICE_PORT_HTTP", "env", "ENV_SVC_PORT", "env", "URL"}
		mk := func(name string, links bool) {
			pod := &corev1.Pod{}
			pod.Name = name
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			pod.Spec.EnableServiceLinks = ptr(links)
			c := helperContainer("main", script...)
			c.Env = []corev1.EnvVar{{Name: "URL", Value: "http://$(ENV_SVC_SERVICE_HOST):$(ENV_SVC_SERVICE_PORT)/"}}
			pod.Spec.Containers = []corev1.Container{c}
			createAndBind(ctx, pod)
		}
		mk("links", true)
		mk("nolinks", false)
		logsOf := func(name string) []string {
			GinkgoHelper()
			Eventually(func() (corev1.PodPhase, error) {
				p, err := getPod(ctx, name)()
				if err != nil {
					return "", err
				}
				return p.Status.Phase, nil
			}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal(corev1.PodSucceeded))
			out, err := podLogs(ctx, name, "main", "")
			Expect(err).NotTo(HaveOccurred())
			return strings.Split(strings.TrimSpace(out), "\n")
		}
		ip := svc.Spec.ClusterIP
		Expect(logsOf("links")).To(Equal([]string{
			"ENV_SVC_SERVICE_HOST=" + ip, "ENV_SVC_SERVICE_PORT_HTTP=80", "ENV_SVC_PORT=tcp://" + ip + ":80", "URL=http://" + ip + ":80/"}))
		Expect(logsOf("nolinks")).To(Equal([]string{
			"ENV_SVC_SERVICE_HOST=", "ENV_SVC_SERVICE_PORT_HTTP=", "ENV_SVC_PORT=", "URL=http://$(ENV_SVC_SERVICE_HOST):$(ENV_SVC_SERVICE_PORT)/"}))
	}, SpecTimeout(60*time.Second))
})
