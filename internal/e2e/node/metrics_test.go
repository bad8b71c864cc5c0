package node

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// scrape GETs url with the client certificates and bearer token given and
// parses a 200 answer with the Prometheus text parser.
func scrape(url string, certs []tls.Certificate, token string) (int, map[string]*dto.MetricFamily) {
	GinkgoHelper()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{ //nolint:gosec // the node's certificate is self-signed
		InsecureSkipVerify: true, Certificates: certs}}}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	Expect(err).NotTo(HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, fams
}

// sample is the value of family's sample whose labels include labels
// (counter, gauge, or a histogram's count), and whether there is one.
func sample(fams map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f := fams[family]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

var _ = Describe("The node agent's /metrics", func() {
	It("serves the kubelet's metrics on its HTTPS port to who may get nodes/metrics", func(ctx SpecContext) {
		s := startSecure(ctx, "metrics-node")
		c := s.c
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = "metered", "default"
		pod.Spec.TerminationGracePeriodSeconds = api.Ptr[int64](0)
		pod.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "60"}}}
		Eventually(func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(c.Create(ctx, pod)).To(Succeed())
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "%+v", p.Status)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		n := &corev1.Node{}
		Expect(c.Get(ctx, client.ObjectKey{Name: "metrics-node"}, n)).To(Succeed())
		base := fmt.Sprintf("https://127.0.0.1:%d", n.Status.DaemonEndpoints.KubeletEndpoint.Port)

		By("an admin (system:masters) reads the kubelet's metric names")
		admin, err := tls.X509KeyPair(s.cfg.TLS.CertData, s.cfg.TLS.KeyData)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			code, fams := scrape(base+"/metrics", []tls.Certificate{admin}, "")
			g.Expect(code).To(Equal(http.StatusOK))
			for _, want := range []struct {
				family string
				labels map[string]string
			}{
				{"kubelet_running_pods", nil},
				{"kubelet_running_containers", map[string]string{"container_state": "running"}},
				{"kubelet_pod_start_duration_seconds", nil},
				{"kubelet_pod_worker_duration_seconds", map[string]string{"operation_type": "create"}},
				{"kubelet_pod_worker_duration_seconds", map[string]string{"operation_type": "sync"}},
				{"kubelet_runtime_operations_total", map[string]string{"operation_type": "start_container"}},
				{"kubelet_runtime_operations_duration_seconds", map[string]string{"operation_type": "start_container"}},
			} {
				v, ok := sample(fams, want.family, want.labels)
				g.Expect(ok).To(BeTrue(), "no %s%v in %v", want.family, want.labels, keys(fams))
				g.Expect(v).To(BeNumerically(">=", 1), "%s%v", want.family, want.labels)
			}
			_, ok := sample(fams, "kubelet_runtime_operations_errors_total", map[string]string{"operation_type": "start_container"})
			g.Expect(ok).To(BeTrue(), "no kubelet_runtime_operations_errors_total")
		}).WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())

		By("without credentials 401, an unknown token 401, alice without nodes/metrics 403")
		code, _ := scrape(base+"/metrics", nil, "")
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, _ = scrape(base+"/metrics", nil, "not-a-token")
		Expect(code).To(Equal(http.StatusUnauthorized))
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(s.dataDir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		aliceCert, aliceKey, err := p.IssueClientCert("alice", []string{"monitoring"}, time.Hour)
		Expect(err).NotTo(HaveOccurred())
		alice, err := tls.X509KeyPair(aliceCert, aliceKey)
		Expect(err).NotTo(HaveOccurred())
		code, _ = scrape(base+"/metrics", []tls.Certificate{alice}, "")
		Expect(code).To(Equal(http.StatusForbidden))

		By("once her group may get nodes/metrics, alice reads /metrics (within the 10 s cache) but still not the logs (nodes/proxy)")
		Expect(c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: api.ObjectMeta{Name: "node-metrics-reader"},
			Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"nodes/metrics"}}}})).To(Succeed())
		Expect(c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: api.ObjectMeta{Name: "monitoring-node-metrics"},
			Subjects: []rbacv1.Subject{{Kind: "Group", APIGroup: rbacv1.GroupName, Name: "monitoring"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "node-metrics-reader"}})).To(Succeed())
		Eventually(func(g Gomega) {
			code, fams := scrape(base+"/metrics", []tls.Certificate{alice}, "")
			g.Expect(code).To(Equal(http.StatusOK))
			g.Expect(fams).To(HaveKey("kubelet_running_pods"))
		}).WithContext(ctx).WithTimeout(20 * time.Second).WithPolling(time.Second).Should(Succeed())
		code, _ = scrape(base+"/containerLogs/default/metered/main", []tls.Certificate{alice}, "")
		Expect(code).To(Equal(http.StatusForbidden))
	})
})

func keys(fams map[string]*dto.MetricFamily) []string {
	out := make([]string, 0, len(fams))
	for k := range fams {
		out = append(out, k)
	}
	return out
}
