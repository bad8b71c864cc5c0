package controlplane

import (
	"net/http"

	"github.com/converge-dev/converge/builtin/metricsapi"
	"github.com/converge-dev/converge/framework/apiserver"
)

// serveMetricsAPI makes the API server answer metrics.k8s.io inside its
// filters (after authorization, beside the access reviews) from the node
// agents' stats, reached like pods/log: over HTTPS with the API server's node
// client certificate when the control plane has a PKI. It returns the
// function that attaches the API server's watch cache once the server exists.
func (cp *ControlPlane) serveMetricsAPI(sec *apiserver.Security) func(*apiserver.Server) {
	o := metricsapi.Options{Logger: cp.log.WithName("metrics-api")}
	if cp.pki != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = cp.pki.NodeClientTLS()
		o.Scheme, o.Transport = "https", tr
	}
	m := metricsapi.New(o)
	inner := sec.Filters.Inner
	sec.Filters.Inner = func(h http.Handler) http.Handler {
		h = m.Wrap(h)
		if inner != nil {
			h = inner(h)
		}
		return h
	}
	return func(srv *apiserver.Server) { m.Attach(srv.CachedObjects) }
}
