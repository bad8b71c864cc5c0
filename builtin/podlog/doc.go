// Package podlog serves the pods/log subresource (`kubectl logs`): GET
// /api/v1/namespaces/NS/pods/NAME/log reads the pod, picks the container
// (the `container` parameter, or the pod's only container), finds the node the
// pod runs on and streams GET http://HOST:PORT/containerLogs/NS/NAME/CONTAINER
// from that node's agent back to the client as text/plain, passing on the
// follow, tailLines, timestamps, sinceSeconds, sinceTime, previous and
// limitBytes parameters. With follow=true every chunk is flushed as it
// arrives and the stream lasts until the client or the agent closes it.
//
// Errors before the stream starts are Kubernetes Status objects with
// Kubernetes' messages: an unknown pod is 404; a missing or unknown container
// and an unscheduled pod ("pod X does not have a host assigned") are 400;
// invalid parameters are 400 (malformed) or 422 (out of range); an error
// answer of the agent is passed on with its code (its Status when it sends
// one, its text otherwise); an unreachable agent is 500.
//
// The node's address comes from a NodeAddressFunc given at construction;
// NodeAddressFromStore reads Nodes from storage and uses the InternalIP (then
// Hostname, then ExternalIP) and status.daemonEndpoints.kubeletEndpoint.Port.
package podlog
