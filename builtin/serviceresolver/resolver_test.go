package serviceresolver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	"github.com/converge-dev/converge/builtin/serviceresolver"
	"github.com/converge-dev/converge/crd"
	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/review"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

var _ = DescribeTable("ServiceName",
	func(host, namespace, name string, ok bool) {
		ns, n, got := serviceresolver.ServiceName(host)
		Expect(got).To(Equal(ok))
		Expect(ns).To(Equal(namespace))
		Expect(n).To(Equal(name))
	},
	Entry("service name", "hook.ns.svc", "ns", "hook", true),
	Entry("cluster domain", "hook.ns.svc.cluster.local", "ns", "hook", true),
	Entry("trailing dot", "hook.ns.svc.cluster.local.", "ns", "hook", true),
	Entry("no namespace", "hook.svc", "", "", false),
	Entry("pod-like name", "a.b.ns.svc", "", "", false),
	Entry("other host", "example.com", "", "", false),
	Entry("address", "127.0.0.1", "", "", false),
)

// objects is a fake watch cache: JSON objects by resource.
type objects map[string][]any

func (o objects) list(_ context.Context, gvr api.GroupVersionResource, _ string) ([][]byte, int64, error) {
	var out [][]byte
	for _, v := range o[gvr.Resource] {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, b)
	}
	return out, 1, nil
}

func service(name string, ports ...map[string]any) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": "ns"},
		"spec":     map[string]any{"type": "ClusterIP", "clusterIP": "10.96.0.9", "ports": ports}}
}

func slice(service, portName string, port int, endpoints ...map[string]any) map[string]any {
	return map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
		"metadata":  map[string]any{"name": service + "-x", "namespace": "ns", "labels": map[string]any{"kubernetes.io/service-name": service}},
		"ports":     []any{map[string]any{"name": portName, "port": port, "protocol": "TCP"}},
		"endpoints": endpoints}
}

func endpoint(ip string, ready bool) map[string]any {
	return map[string]any{"addresses": []any{ip}, "conditions": map[string]any{"ready": ready}}
}

// listen serves TLS for the Service name hook.ns.svc on a loopback port; the
// returned CA bundle verifies it.
func listen(h http.Handler) (port int, caPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hook.ns.svc"},
		DNSNames: []string{"hook.ns.svc"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	srv := &http.Server{Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}
	go func() { _ = srv.ServeTLS(l, "", "") }()
	DeferCleanup(srv.Close)
	return l.Addr().(*net.TCPAddr).Port, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

var _ = Describe("Resolver", func() {
	var (
		port  int
		ca    []byte
		hits  atomic.Int32
		store objects
		r     *serviceresolver.Resolver
	)
	BeforeEach(func() {
		hits.Store(0)
		port, ca = listen(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			hits.Add(1)
			_, _ = io.WriteString(w, "ok")
		}))
		// Port 1 on 127.0.0.2 refuses connections: a dead endpoint.
		store = objects{
			"services": {service("hook", map[string]any{"name": "https", "port": 443, "protocol": "TCP"})},
			"endpointslices": {slice("hook", "https", port, endpoint("127.0.0.1", true), endpoint("127.0.0.3", false)),
				slice("other", "https", 1, endpoint("127.0.0.4", true))},
		}
		r = &serviceresolver.Resolver{List: store.list}
	})

	It("resolves a Service port to its ready endpoints' target port", func(ctx SpecContext) {
		Expect(r.Resolve(ctx, "ns", "hook", 443)).To(Equal([]string{"127.0.0.1:" + strconv.Itoa(port)}))
	})

	It("refuses a port the Service does not have, an unknown Service and one without ready endpoints", func(ctx SpecContext) {
		_, err := r.Resolve(ctx, "ns", "hook", 8443)
		Expect(err).To(MatchError(ContainSubstring("has no TCP port 8443")))
		_, err = r.Resolve(ctx, "ns", "nothere", 443)
		Expect(err).To(MatchError(ContainSubstring("not found")))
		store["endpointslices"] = []any{slice("hook", "https", port, endpoint("127.0.0.1", false))}
		_, err = r.Resolve(ctx, "ns", "hook", 443)
		Expect(errors.Is(err, serviceresolver.ErrNoEndpoints)).To(BeTrue(), "%v", err)
	})

	It("skips an endpoint that refuses the connection", func(ctx SpecContext) {
		store["endpointslices"] = []any{slice("hook", "https", port, endpoint("127.0.0.1", true)),
			map[string]any{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
				"metadata":  map[string]any{"name": "hook-y", "namespace": "ns", "labels": map[string]any{"kubernetes.io/service-name": "hook"}},
				"ports":     []any{map[string]any{"name": "https", "port": 1}},
				"endpoints": []any{endpoint("127.0.0.2", true)}}}
		for range 5 {
			c, err := r.Dial(ctx, "tcp", "hook.ns.svc:443")
			Expect(err).NotTo(HaveOccurred())
			Expect(c.RemoteAddr().String()).To(Equal("127.0.0.1:" + strconv.Itoa(port)))
			Expect(c.Close()).To(Succeed())
		}
	})

	It("dials an ExternalName Service's name and other addresses as they are", func(ctx SpecContext) {
		store["services"] = []any{map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "ext", "namespace": "ns"},
			"spec":     map[string]any{"type": "ExternalName", "externalName": "127.0.0.1"}}}
		c, err := r.Dial(ctx, "tcp", "ext.ns.svc:"+strconv.Itoa(port))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Close()).To(Succeed())
		c, err = r.Dial(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(port))
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Close()).To(Succeed())
	})

	It("lets an admission webhook with a service reference be called through the Service, its certificate checked for the Service's name", func(ctx SpecContext) {
		port, ca = listen(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			hits.Add(1)
			var in review.AdmissionReview
			Expect(json.NewDecoder(req.Body).Decode(&in)).To(Succeed())
			Expect(req.URL.Path).To(Equal("/always-deny"))
			_ = json.NewEncoder(w).Encode(review.AdmissionReview{APIVersion: in.APIVersion, Kind: in.Kind,
				Response: &review.AdmissionResponse{UID: in.Request.UID, Allowed: false, Result: &api.Status{Message: "no configmaps today"}}})
		}))
		store["endpointslices"] = []any{slice("hook", "https", port, endpoint("127.0.0.1", true))}
		path := "/always-deny"
		svcPort := int32(443)
		cfg := admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: api.ObjectMeta{Name: "deny"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "deny.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: ca,
					Service: &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: "hook", Path: &path, Port: &svcPort}},
				Rules: []admissionregistrationv1.RuleWithOperations{{Operations: []string{"CREATE"},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
				SideEffects: ptr("None"), AdmissionReviewVersions: []string{"v1"}}}}
		w := &admission.Webhooks{Dial: r.Dial, Hooks: func(context.Context) ([]admission.Hook, error) {
			return admissionregistrationv1.ValidatingHooks([]admissionregistrationv1.ValidatingWebhookConfiguration{cfg}), nil
		}}
		err := w.Validate(ctx, &admission.Attributes{Operation: admission.Create, Namespace: "ns", Name: "cm", Namespaced: true,
			Kind:     api.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			Object:   map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "namespace": "ns"}}})
		Expect(err).To(MatchError(ContainSubstring(`admission webhook "deny.example.com" denied the request: no configmaps today`)))
		Expect(hits.Load()).To(BeEquivalentTo(1))

		By("without the resolver the Service name does not resolve")
		w = &admission.Webhooks{Hooks: w.Hooks}
		err = w.Validate(ctx, &admission.Attributes{Operation: admission.Create, Namespace: "ns", Name: "cm", Namespaced: true,
			Kind:     api.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			Object:   map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "namespace": "ns"}}})
		Expect(err).To(MatchError(ContainSubstring("failed calling webhook")))
	})

	It("lets a CRD's conversion webhook with a service reference be called through the Service", func(ctx SpecContext) {
		port, ca = listen(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			hits.Add(1)
			var in review.ConversionReview
			Expect(json.NewDecoder(req.Body).Decode(&in)).To(Succeed())
			var out []map[string]any
			for _, o := range in.Request.Objects {
				o["apiVersion"] = in.Request.DesiredAPIVersion
				out = append(out, o)
			}
			_ = json.NewEncoder(w).Encode(review.ConversionReview{APIVersion: in.APIVersion, Kind: in.Kind,
				Response: &review.ConversionResponse{UID: in.Request.UID, ConvertedObjects: out, Result: api.Status{Status: api.StatusSuccess}}})
		}))
		store["endpointslices"] = []any{slice("hook", "https", port, endpoint("127.0.0.1", true))}
		path := "/crdconvert"
		svcPort := int32(443)
		c := &crdapi.CustomResourceDefinition{Metadata: api.ObjectMeta{Name: "widgets.example.com"},
			Spec: crdapi.CustomResourceDefinitionSpec{Group: "example.com", Scope: "Namespaced",
				Names:    crdapi.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
				Versions: []crdapi.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true}, {Name: "v2", Served: true}},
				Conversion: &crdapi.CustomResourceConversion{Strategy: "Webhook", Webhook: &crdapi.WebhookConversion{
					ConversionReviewVersions: []string{"v1"},
					ClientConfig: &crdapi.WebhookClientConfig{CABundle: ca,
						Service: &crdapi.ServiceReference{Namespace: "ns", Name: "hook", Path: &path, Port: &svcPort}}}}}}
		rs, err := crd.CustomResources(c, r.Dial)
		Expect(err).NotTo(HaveOccurred())
		out, err := rs[0].Convert(map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": "w", "namespace": "ns"}}, api.GroupVersion{Group: "example.com", Version: "v2"})
		Expect(err).NotTo(HaveOccurred())
		Expect(out["apiVersion"]).To(Equal("example.com/v2"))
		Expect(hits.Load()).To(BeEquivalentTo(1))
	})
})

func ptr[T any](v T) *T { return &v }
