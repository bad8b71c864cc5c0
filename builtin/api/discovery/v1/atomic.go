package v1

// The types below are owned as a whole by server-side apply: Kubernetes marks
// them +structType=atomic in its API types (k8s.io/api). Their AtomicStruct
// method is the marker framework/apiserver/fieldmanager reads.

// AtomicStruct marks EndpointPort as owned as a whole.
func (EndpointPort) AtomicStruct() {}
