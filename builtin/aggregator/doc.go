// Package aggregator is the API aggregation layer, as kube-apiserver's
// kube-aggregator provides it: requests under /apis/GROUP/VERSION whose
// APIService (apiregistration.k8s.io/v1, named VERSION.GROUP) names a
// Service are proxied to that Service's endpoint (all verbs, watches and
// upgraded connections), over TLS verified with the APIService's caBundle
// against NAME.NAMESPACE.svc (unless insecureSkipTLSVerify), authenticated
// with the front-proxy client certificate, the requesting user carried in
// X-Remote-User, X-Remote-Uid, X-Remote-Group and X-Remote-Extra-* headers
// (incoming ones are dropped, as is the Authorization header). The
// aggregated server authorizes the user itself, as it does behind
// kube-apiserver; the API server has authenticated and authorized the
// request before Wrap's handler sees it.
//
// Check probes a Service-backed APIService the way kube-aggregator's
// availability controller does and returns its Available condition, with
// Kubernetes' reasons (ServiceNotFound, ServicePortError,
// EndpointsNotFound, MissingEndpoints, FailedDiscoveryCheck, Passed).
// Groups only aggregated servers serve are answered at /apis/GROUP from the
// available APIServices, and Discovery lists them for /apis.
//
// APIServices, Services and EndpointSlices are read through a Lister (the
// API server's watch cache); the routing table is refreshed by Refresh (the
// control plane's APIService loop) and on a miss.
package aggregator
