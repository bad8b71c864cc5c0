// Package endpoints is the legacy Endpoints controller, for clients that
// predate EndpointSlices; it follows Kubernetes' pkg/controller/endpoint.
//
// Contract:
//
//   - Every Service with a selector gets one Endpoints object of the same name
//     and namespace, labelled endpoints.kubernetes.io/managed-by=endpoint-controller
//     plus the Service's own labels (and service.kubernetes.io/headless for
//     headless Services). Like Kubernetes it carries no ownerReference: the
//     controller deletes it when the Service goes away. Services without a
//     selector are left alone, so users may manage their Endpoints by hand.
//   - Pods are selected as for EndpointSlices: matching the selector in the
//     Service's namespace, with a podIP, not terminal. Terminating pods are
//     left out unless the Service has publishNotReadyAddresses.
//   - A ready pod (or any pod with publishNotReadyAddresses) goes to
//     addresses, others to notReadyAddresses. Ports are resolved per pod from
//     targetPort (number, or container port name and protocol); a pod lacking a
//     named port is left out of that port. Addresses are grouped into subsets
//     by identical port sets, addresses sorted by IP, ports by name. A headless
//     Service without ports lists its addresses with no ports.
//   - At most 1000 addresses are kept; beyond that the object is truncated and
//     annotated endpoints.kubernetes.io/over-capacity=truncated.
//   - Nothing is written when subsets, labels and annotations already match.
//
// Failures are recorded as Warning events FailedToCreateEndpoint and
// FailedToUpdateEndpoint on the Service, as in Kubernetes.
package endpoints
