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
// Unlike Kubernetes, loopback pod IPs are allowed: the process runtime gives
// pods loopback addresses (127.77.0.0/16).
package podproxy
