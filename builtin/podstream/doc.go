// Package podstream serves the streaming subresources of pods: pods/exec,
// pods/attach and pods/portforward (kubectl exec, cp, attach and
// port-forward). Each is a registry.Subresource answering GET and POST;
// the authorization filter checks them as Kubernetes does up to 1.34: `create`
// for POST (SPDY clients) and `get` for GET (WebSocket clients).
//
// Each is a registry.Connecter: before Serve, the API server runs admission
// with operation CONNECT on the request's PodExecOptions, PodAttachOptions or
// PodPortForwardOptions (ConnectOptions, read from the query), so admission
// webhooks can refuse an exec or attach as in Kubernetes.
//
// Serve checks the request against the pod (the container exists and, for
// exec and attach, the pod has not completed; the pod has a node; exec names a
// command; at least one stream is asked for), then proxies the upgrade to the
// node agent that runs the pod, at /exec/NS/POD/CONTAINER,
// /attach/NS/POD/CONTAINER or /portforward/NS/POD with the client's query and
// upgrade headers (never its credentials): the agent authenticates the API
// server by its node client certificate, as for pods/log. When the agent
// switches protocols the API server hands its answer to the client and copies
// bytes both ways until either side closes, then closes both; any other answer
// of the agent reaches the client as a Status, as do the checks' failures
// (400 for a bad request, a missing container, a completed pod or a node whose
// agent serves no streams, 404 for an unknown pod). The protocols themselves
// (SPDY/3.1 and WebSocket) are the agent's business (builtin/node/stream).
package podstream
