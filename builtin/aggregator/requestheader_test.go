package aggregator_test

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/aggregator"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

var _ = Describe("RequestHeader", func() {
	var frontProxy, other *pki.PKI

	BeforeEach(func() {
		var err error
		frontProxy, err = pki.EnsureCA(pki.Options{Dir: GinkgoT().TempDir()})
		Expect(err).NotTo(HaveOccurred())
		other, err = pki.EnsureCA(pki.Options{Dir: GinkgoT().TempDir()})
		Expect(err).NotTo(HaveOccurred())
	})

	// request is a request over TLS with a client certificate of ca named cn
	// (none when ca is nil) and the headers.
	request := func(ca *pki.PKI, cn string, header http.Header) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api", nil)
		r.Header = header
		r.TLS = &tls.ConnectionState{}
		if ca != nil {
			certPEM, keyPEM, err := ca.IssueClientCert(cn, nil, time.Hour)
			Expect(err).NotTo(HaveOccurred())
			pair, err := tls.X509KeyPair(certPEM, keyPEM)
			Expect(err).NotTo(HaveOccurred())
			r.TLS.PeerCertificates = []*x509.Certificate{pair.Leaf}
		}
		return r
	}
	remote := http.Header{"X-Remote-User": {"alice"}, "X-Remote-Uid": {"42"}, "X-Remote-Group": {"devs", "ops"},
		"X-Remote-Extra-Acme.com%2fproject": {"a", "b"}, "X-Remote-Extra-Scopes": {"s"}}

	DescribeTable("authenticates",
		func(ca func() *pki.PKI, cn string, header http.Header, want *filters.User, wantOK, wantErr bool) {
			allowed := []string{"front-proxy-client"}
			first := request(ca(), cn, header.Clone())
			// Without memory, and with it: the connection's second request
			// (the same parsed certificate) is answered from memory alike.
			for _, a := range []aggregator.RequestHeader{{Roots: frontProxy.CAPool(), AllowedNames: allowed},
				aggregator.NewRequestHeader(frontProxy.CAPool(), allowed)} {
				for i := range 2 {
					r := first.Clone(first.Context())
					r.Header = header.Clone()
					u, ok, err := a.Authenticate(r)
					Expect(ok).To(Equal(wantOK), "request %d", i)
					Expect(err != nil).To(Equal(wantErr), "request %d: error %v", i, err)
					Expect(u).To(Equal(want), "request %d", i)
					if ok {
						Expect(r.Header.Get("X-Remote-User")).To(BeEmpty(), "the headers are consumed")
					}
				}
			}
		},
		Entry("the front proxy: the user of the headers", func() *pki.PKI { return frontProxy }, "front-proxy-client", remote,
			&filters.User{Name: "alice", UID: "42", Groups: []string{"devs", "ops"},
				Extra: map[string][]string{"acme.com/project": {"a", "b"}, "scopes": {"s"}}}, true, false),
		Entry("a name not allowed", func() *pki.PKI { return frontProxy }, "someone", remote, nil, false, true),
		Entry("no X-Remote-User", func() *pki.PKI { return frontProxy }, "front-proxy-client", http.Header{}, nil, false, true),
		Entry("another CA's client: not ours to judge", func() *pki.PKI { return other }, "front-proxy-client", remote, nil, false, false),
		Entry("no client certificate", func() *pki.PKI { return nil }, "", remote, nil, false, false),
	)
})
