package aggregator_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/aggregator"
	apiregistrationv1 "github.com/converge-dev/converge/builtin/api/apiregistration/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// objects is a Lister over JSON objects by resource.
type objects map[string][]string

func (o objects) list(_ context.Context, gvr api.GroupVersionResource, _ string) ([][]byte, int64, error) {
	var out [][]byte
	for _, s := range o[gvr.Resource] {
		out = append(out, []byte(s))
	}
	return out, 1, nil
}

const (
	svcJSON   = `{"metadata":{"name":"api","namespace":"wardle"},"spec":{"ports":[{"name":"https","port":443}]}}`
	sliceJSON = `{"metadata":{"name":"api-1","namespace":"wardle","labels":{"kubernetes.io/service-name":"api"}},"addressType":"IPv4",
		"endpoints":[{"addresses":["127.0.0.1"],"conditions":{"ready":%t}}],"ports":[{"name":"https","port":1}]}`
)

var _ = Describe("Aggregator", func() {
	var (
		backend *httptest.Server
		seen    chan http.Header
		svc     *apiregistrationv1.APIService
	)

	BeforeEach(func() {
		seen = make(chan http.Header, 4)
		backend = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen <- r.Header.Clone()
			_, _ = fmt.Fprint(w, `{"kind":"APIResourceList","groupVersion":"wardle.example.com/v1alpha1","resources":[]}`)
		}))
		DeferCleanup(backend.Close)
		caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: backend.Certificate().Raw})
		port := int32(443)
		svc = &apiregistrationv1.APIService{ObjectMeta: api.ObjectMeta{Name: "v1alpha1.wardle.example.com"},
			Spec: apiregistrationv1.APIServiceSpec{Group: "wardle.example.com", Version: "v1alpha1", CABundle: caBundle,
				Service: &apiregistrationv1.ServiceReference{Namespace: "wardle", Name: "api", Port: &port}}}
	})

	// newAggregator serves the APIService and objs; every Service name dials
	// the backend. httptest's certificate names example.com, not
	// api.wardle.svc, so the APIService's caBundle (that certificate) does
	// not verify it: the passing cases skip verification.
	newAggregator := func(objs objects) *aggregator.Aggregator {
		b, err := json.Marshal(svc)
		Expect(err).NotTo(HaveOccurred())
		objs["apiservices"] = []string{string(b)}
		return aggregator.New(aggregator.Options{List: objs.list,
			Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, backend.Listener.Addr().String())
			}})
	}

	It("forwards the request's user in X-Remote-* headers, not the client's headers or credentials", func() {
		svc.Spec.CABundle, svc.Spec.InsecureSkipTLSVerify = nil, true
		a := newAggregator(objects{})
		w := httptest.NewRecorder()
		a.Wrap(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/apis/wardle.example.com/v1alpha1/flunders", nil))
		Expect(w.Code).To(Equal(http.StatusServiceUnavailable), "not checked yet: not proxied")
		a.Record(svc.Name, aggregator.Condition{Status: "True", Reason: "Passed"})
		r := httptest.NewRequest(http.MethodGet, "/apis/wardle.example.com/v1alpha1/flunders", nil)
		r.Header.Set("Authorization", "Bearer secret")
		r.Header.Set("X-Remote-User", "mallory")
		r.Header.Set("X-Remote-Extra-Forged", "x")
		r = r.WithContext(filters.WithUser(r.Context(), &filters.User{Name: "alice", Groups: []string{"devs"},
			Extra: map[string][]string{"acme.com/project": {"p"}}}))
		w = httptest.NewRecorder()
		a.Wrap(http.NotFoundHandler()).ServeHTTP(w, r)
		Expect(w.Code).To(Equal(http.StatusOK), w.Body.String())
		h := <-seen
		Expect(h.Values("X-Remote-User")).To(Equal([]string{"alice"}))
		Expect(h.Values("X-Remote-Group")).To(Equal([]string{"devs"}))
		Expect(h.Values("X-Remote-Extra-Acme.com%2Fproject")).To(Equal([]string{"p"}))
		Expect(h.Get("X-Remote-Extra-Forged")).To(BeEmpty())
		Expect(h.Get("Authorization")).To(BeEmpty())
	})

	It("passes other paths on", func() {
		a := newAggregator(objects{})
		for _, path := range []string{"/api/v1/pods", "/apis/apps/v1/deployments", "/apis/other.example.com/v1/things"} {
			w := httptest.NewRecorder()
			a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })).
				ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
			Expect(w.Code).To(Equal(http.StatusTeapot), path)
		}
	})

	DescribeTable("checks availability with kube-aggregator's reasons",
		func(objs objects, change func(*apiregistrationv1.APIService), status, reason, message string) {
			if change != nil {
				change(svc)
			}
			a := newAggregator(objs)
			c := a.Check(context.Background(), svc)
			a.Record(svc.Name, c)
			Expect(c.Status).To(Equal(status))
			Expect(c.Reason).To(Equal(reason))
			Expect(c.Message).To(ContainSubstring(message))
			if status == "False" {
				w := httptest.NewRecorder()
				a.Wrap(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/apis/wardle.example.com/v1alpha1/flunders", nil))
				Expect(w.Code).To(Equal(http.StatusServiceUnavailable))
				Expect(w.Body.String()).To(ContainSubstring(`"reason":"ServiceUnavailable"`))
			}
		},
		Entry("no Service", objects{}, nil, "False", "ServiceNotFound", `service/api in "wardle" is not present`),
		Entry("no such port", objects{"services": {svcJSON}}, func(s *apiregistrationv1.APIService) { p := int32(8443); s.Spec.Service.Port = &p },
			"False", "ServicePortError", `service/api in "wardle" is not listening on port 8443`),
		Entry("no EndpointSlice", objects{"services": {svcJSON}}, nil, "False", "EndpointsNotFound", `cannot find endpoints for service/api in "wardle"`),
		Entry("no ready endpoint", objects{"services": {svcJSON}, "endpointslices": {fmt.Sprintf(sliceJSON, false)}}, nil,
			"False", "MissingEndpoints", `endpoints for service/api in "wardle" have no addresses with port name "https"`),
		Entry("a caBundle that does not verify", objects{"services": {svcJSON}, "endpointslices": {fmt.Sprintf(sliceJSON, true)}}, nil,
			"False", "FailedDiscoveryCheck", "failing or missing response from https://api.wardle.svc:443/apis/wardle.example.com/v1alpha1"),
		Entry("a bad caBundle", objects{"services": {svcJSON}, "endpointslices": {fmt.Sprintf(sliceJSON, true)}},
			func(s *apiregistrationv1.APIService) {
				s.Spec.CABundle = []byte(base64.StdEncoding.EncodeToString([]byte("junk")))
			},
			"False", "FailedDiscoveryCheck", "caBundle holds no PEM certificate"),
		Entry("all checks pass", objects{"services": {svcJSON}, "endpointslices": {fmt.Sprintf(sliceJSON, true)}},
			func(s *apiregistrationv1.APIService) { s.Spec.CABundle, s.Spec.InsecureSkipTLSVerify = nil, true },
			"True", "Passed", "all checks passed"),
	)
})
