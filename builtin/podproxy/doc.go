// Package podproxy serves the pods/proxy subresource: any method on
// /api/v1/namespaces/NS/pods/NAME/proxy[/PATH] is forwarded, as Kubernetes'
// API server does, to http://POD_IP:PORT/PATH (query, body and answer passed
// through, upgrades such as WebSocket included). NAME is "name",
// "name:port" or "scheme:name:port" (scheme http or https); without a port
// the first containerPort of the pod's containers is used, without any the
// scheme's default. The client's credentials (Authorization, impersonation
// headers) are not passed on.
//
// Errors are Kubernetes Status objects: an unknown pod is 404; a malformed
// name, a pod without an IP, or an address that cannot be a pod's
// (unspecified, multicast) is 400; an unreachable pod is 503.
// Kubernetes refuses loopback and link-local targets; here such an address
// is allowed only inside the pod CIDRs of the pod's node (the process runtime
// gives pods loopback addresses from its node's range, 127.10.0.0/16 by
// default), so the host's own loopback services (API server, etcd, node
// agent) and link-local metadata services stay out of reach (400).
package podproxy
