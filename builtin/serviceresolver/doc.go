// Package serviceresolver lets the API server's own clients (admission and
// conversion webhooks, aggregated API servers) reach a Service by its DNS
// name, NAME.NAMESPACE.svc:PORT, without cluster DNS: Dial resolves the name
// to the Service's endpoints, as kube-apiserver's endpoint service resolver
// (--enable-aggregator-routing) does, and connects to one of them.
//
// PORT is a port of the Service; the connection goes to the matching port
// (by name) of a ready endpoint of the Service's EndpointSlices (label
// kubernetes.io/service-name), tried in random order until one accepts. An
// ExternalName Service dials its external name at PORT. The TLS server name
// stays NAME.NAMESPACE.svc, so certificates are checked against the name the
// configuration used. Addresses that are not a Service's name
// (NAME.NAMESPACE.svc[.cluster.local] with a port) are dialled as they are.
//
// Services and EndpointSlices are read through a Lister (the API server's
// watch cache), so a resolution costs no storage round trip.
package serviceresolver
