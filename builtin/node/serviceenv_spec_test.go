package node_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Service environment variables", func() {
	It("are injected for the namespace's Services unless enableServiceLinks is false, and $(VAR) can use them", func(ctx SpecContext) {
		svc := &corev1.Service{Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "none"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt(8080)}}}}
		svc.Name, svc.Namespace = "env-svc", "default"
		Expect(suite.c.Create(ctx, svc)).To(Succeed())
		Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
		// The agent reads Services from the watch cache, like the kubelet's
		// informer: a pod started before the cache has the Service would not
		// see it (as in Kubernetes), so wait until it has.
		Eventually(func(g Gomega) {
			l := &corev1.ServiceList{}
			g.Expect(suite.c.List(ctx, l, client.InNamespace("default"), &client.ListOptions{ResourceVersion: "0"})).To(Succeed())
			g.Expect(l.Items).To(ContainElement(HaveField("ObjectMeta.Name", "env-svc")))
		}).WithContext(ctx).Should(Succeed())

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

	It("always include the kubernetes Service's, whatever enableServiceLinks and namespace", func(ctx SpecContext) {
		apiIP, err := servicenet.APIServerServiceIP(suite.env.ServiceCIDR)
		Expect(err).NotTo(HaveOccurred())
		ip := apiIP.String()
		names := []string{"KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBERNETES_SERVICE_PORT_HTTPS",
			"KUBERNETES_PORT", "KUBERNETES_PORT_443_TCP", "KUBERNETES_PORT_443_TCP_PROTO", "KUBERNETES_PORT_443_TCP_PORT",
			"KUBERNETES_PORT_443_TCP_ADDR"}
		want := []string{"KUBERNETES_SERVICE_HOST=" + ip, "KUBERNETES_SERVICE_PORT=443", "KUBERNETES_SERVICE_PORT_HTTPS=443",
			"KUBERNETES_PORT=tcp://" + ip + ":443", "KUBERNETES_PORT_443_TCP=tcp://" + ip + ":443",
			"KUBERNETES_PORT_443_TCP_PROTO=tcp", "KUBERNETES_PORT_443_TCP_PORT=443", "KUBERNETES_PORT_443_TCP_ADDR=" + ip}
		var script []string
		for _, n := range names {
			script = append(script, "env", n)
		}
		ns := &corev1.Namespace{}
		ns.Name = "kube-env"
		Expect(suite.c.Create(ctx, ns)).To(Succeed())
		for _, tc := range []struct {
			name, namespace string
			links           bool
		}{{"kube-env-links", "default", true}, {"kube-env-nolinks", "default", false}, {"kube-env-other-ns", "kube-env", false}} {
			pod := &corev1.Pod{}
			pod.Name, pod.Namespace = tc.name, tc.namespace
			pod.Spec.RestartPolicy = corev1.RestartPolicyNever
			pod.Spec.EnableServiceLinks = ptr(tc.links)
			pod.Spec.Containers = []corev1.Container{helperContainer("main", script...)}
			createAndBind(ctx, pod)
			Eventually(func(g Gomega) {
				p := &corev1.Pod{}
				g.Expect(suite.c.Get(ctx, client.ObjectKeyFromObject(pod), p)).To(Succeed())
				g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded))
			}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
			out, err := podLogsIn(ctx, tc.namespace, tc.name, "main", "")
			Expect(err).NotTo(HaveOccurred())
			Expect(strings.Split(strings.TrimSpace(out), "\n")).To(Equal(want), tc.name)
		}
	}, SpecTimeout(90*time.Second))
})
