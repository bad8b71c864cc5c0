// Package endpointslice is the EndpointSlice controller: for every Service with
// a selector it keeps EndpointSlices listing the Service's pods, following
// Kubernetes' pkg/controller/endpointslice.
//
// Contract:
//
//   - A Service with a selector gets slices labelled kubernetes.io/service-name
//     and endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io,
//     controlled by the Service (ownerReference with controller: true) and named
//     from generateName "<service>-". Services without a selector are left
//     alone (their slices are someone else's).
//   - Endpoints are the pods in the Service's namespace matching its selector
//     that have a podIP and are not in a terminal phase (Succeeded, Failed).
//     Conditions: serving = pod Ready; terminating = pod is being deleted;
//     ready = serving and not terminating. publishNotReadyAddresses makes every
//     endpoint ready and serving.
//   - Ports are resolved per pod from the Service ports' targetPort (a number,
//     or the name of a container port with the same protocol). A pod lacking a
//     named port is left out of that port, so endpoints are grouped by their
//     resolved port set and address type (IPv4, or IPv6 for an IPv6 podIP),
//     each group in slices of at most MaxEndpointsPerSlice (100) endpoints.
//   - A Service with no endpoints keeps one empty placeholder slice, like
//     Kubernetes.
//   - Reconciling is level-based and write-free when nothing changed: existing
//     slices keep their endpoints in place, new endpoints fill free room before
//     new slices are created, empty and stale slices are deleted.
//   - When the Service is gone its managed slices are deleted by this
//     controller (garbage collection would also remove them through the
//     ownerReference).
//
// Failures to write slices are recorded as Warning events
// FailedToUpdateEndpointSlices on the Service, as in Kubernetes.
//
// Simplifications: one endpoint per pod from its primary podIP (no dual-stack
// fan-out), no topology hints, no endpoints.kubernetes.io/last-change-trigger-time
// annotation.
package endpointslice
