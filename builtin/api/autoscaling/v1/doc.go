// Package v1 holds the autoscaling/v1 kinds Converge knows: Scale, the body of the
// scale subresource of Deployments, ReplicaSets and StatefulSets. It has the Go
// types with Kubernetes' JSON and protobuf field names and AddToScheme. Scale is
// not a served resource, so the package has no Resources function.
package v1
