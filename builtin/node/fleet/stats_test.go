package fleet_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	metricsv1beta1 "github.com/converge-dev/converge/builtin/api/metrics/v1beta1"
	"github.com/converge-dev/converge/builtin/podlog"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Simulated node stats", func() {
	It("report each running container at its requests through metrics.k8s.io and /metrics/resource", func(ctx SpecContext) {
		name := fmt.Sprintf("busy-%d", time.Now().UnixNano())
		pod := &corev1.Pod{ObjectMeta: api.ObjectMeta{Name: name, Labels: map[string]string{"stats": name}}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"cpu": {S: "250m"}, "memory": {S: "64Mi"}}}}}}}
		bind(ctx, pod, "sim-node-7")

		Eventually(func(g Gomega) {
			list := &metricsv1beta1.PodMetricsList{}
			g.Expect(suite.c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"stats": name})).To(Succeed())
			g.Expect(list.Items).To(HaveLen(1))
			g.Expect(list.Items[0].Containers).To(HaveLen(1))
			u := list.Items[0].Containers[0].Usage
			g.Expect(u["cpu"].S).To(Equal("250000000n"))
			g.Expect(u["memory"].S).To(Equal("65536Ki"))
		}).WithTimeout(10 * time.Second).Should(Succeed())

		node := &metricsv1beta1.NodeMetrics{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Name: "sim-node-7"}, node)).To(Succeed())
		cpu, err := node.Usage["cpu"].MilliValue()
		Expect(err).NotTo(HaveOccurred())
		Expect(cpu).To(BeNumerically(">=", 250))

		n := &corev1.Node{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Name: "sim-node-7"}, n)).To(Succeed())
		host, port, err := podlog.NodeAddress(n)
		Expect(err).NotTo(HaveOccurred())
		resp, err := http.Get((&url.URL{Scheme: "http", Host: fmt.Sprintf("%s:%d", host, port), Path: "/metrics/resource"}).String())
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		Expect(string(body)).To(ContainSubstring(`container_memory_working_set_bytes{container="app",namespace="default",pod="` + name + `"} 6.7108864e+07`))
		Expect(strings.Count(string(body), "# TYPE node_cpu_usage_seconds_total counter")).To(Equal(1))
	})
})
