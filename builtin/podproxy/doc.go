// Package podproxy serves the proxy subresources of pods, services and
// nodes, one implementation for the three: any method on
// /api/v1/[namespaces/NS/]RESOURCE/NAME/proxy[/PATH] is forwarded, as
// Kubernetes' API server does, to SCHEME://HOST:PORT/PATH (query, body and
// answer passed through, upgrades such as WebSocket included). NAME is
// "name", "name:port" or "scheme:name:port" (scheme http or https). The
// client's credentials (Authorization, impersonation headers) are not passed
// on. GET and HEAD of .../proxy with no path are redirected (301) to
// .../proxy/; links in an HTML answer and a redirect's Location that point
// at the target are rewritten to go through the proxy again, as Kubernetes
// does; the target's CORS headers are dropped. HTTPS targets are not
// verified (Kubernetes' proxy transport does not verify pods' certificates
// either).
//
// Where a request goes:
//   - pods/proxy: the pod's IP; port or else the first containerPort of its
//     containers, without any the scheme's default.
//   - services/proxy: a ready address of the Service's Endpoints that is the
//     IP of the pod it names (targetRef), on the endpoint port whose name is
//     port's; a port number is first turned into the name of the Service
//     port with that number. No such address is 503.
//   - nodes/proxy: the node agent's server (the node's InternalIP, else
//     Hostname, else ExternalIP, and its kubelet endpoint port) over the
//     agent's scheme and transport (HTTPS with the API server's node client
//     certificate when the control plane has a PKI), whatever scheme was
//     asked; another port goes to that port of the node's address with the
//     scheme asked.
//
// Errors are Kubernetes Status objects: an unknown pod, service or node is
// 404; a malformed name, a pod without an IP, or an address that cannot be a
// pod's (unspecified, multicast) is 400; an unreachable target or a service
// without a ready endpoint is 503. Kubernetes refuses loopback and
// link-local targets; here a pod's (or a service endpoint's pod's) address
// of that kind is allowed only inside the pod CIDRs of the pod's node (the
// process runtime gives pods loopback addresses from its node's range,
// 127.10.0.0/16 by default), and a node's address only on the agent's own
// port, so the host's other loopback services (API server, etcd) and
// link-local metadata services stay out of reach (400).
package podproxy
