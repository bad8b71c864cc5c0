// Package endpointslicemirroring mirrors custom Endpoints into EndpointSlices
// (Kubernetes' endpointslicemirroring controller), so clients that read only
// EndpointSlices (service proxies, DNS) see the endpoints of Services without
// a selector, whose Endpoints someone else writes.
//
// An Endpoints object is mirrored when a Service of the same name exists with
// no selector, and the Endpoints carries neither the label
// endpointslice.kubernetes.io/skip-mirror=true (the API server's own
// default/kubernetes has it) nor a leader-election annotation. Its subsets
// become EndpointSlices, one per address type (IPv4, IPv6) and distinct port
// list (subsets with the same ports share a slice): addresses are ready
// endpoints, notReadyAddresses unready ones, with hostname, nodeName and
// targetRef kept; at most 1000 addresses of a subset are mirrored. The slices
// copy the Endpoints' labels and annotations (but its last-change-trigger-time
// and last-applied-configuration), are labelled kubernetes.io/service-name and
// endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io,
// are owned by the Endpoints, and are named after it (generateName). Slices
// that no longer correspond to a subset group are deleted, as are all mirrored
// slices when the Endpoints or Service goes, the Service gains a selector, or
// mirroring is switched off.
package endpointslicemirroring
