package v1

// The types below are owned as a whole by server-side apply: Kubernetes marks
// them +structType=atomic in its API types (k8s.io/api). Their AtomicStruct
// method is the marker framework/apiserver/fieldmanager reads.

// AtomicStruct marks FileKeySelector as owned as a whole.
func (FileKeySelector) AtomicStruct() {}

// AtomicStruct marks ObjectFieldSelector as owned as a whole.
func (ObjectFieldSelector) AtomicStruct() {}

// AtomicStruct marks ResourceFieldSelector as owned as a whole.
func (ResourceFieldSelector) AtomicStruct() {}

// AtomicStruct marks ConfigMapKeySelector as owned as a whole.
func (ConfigMapKeySelector) AtomicStruct() {}

// AtomicStruct marks SecretKeySelector as owned as a whole.
func (SecretKeySelector) AtomicStruct() {}

// AtomicStruct marks NodeSelector as owned as a whole.
func (NodeSelector) AtomicStruct() {}

// AtomicStruct marks NodeSelectorTerm as owned as a whole.
func (NodeSelectorTerm) AtomicStruct() {}

// AtomicStruct marks EvictionResponder as owned as a whole.
func (EvictionResponder) AtomicStruct() {}

// AtomicStruct marks EndpointAddress as owned as a whole.
func (EndpointAddress) AtomicStruct() {}

// AtomicStruct marks EndpointPort as owned as a whole.
func (EndpointPort) AtomicStruct() {}

// AtomicStruct marks ObjectReference as owned as a whole.
func (ObjectReference) AtomicStruct() {}

// AtomicStruct marks LocalObjectReference as owned as a whole.
func (LocalObjectReference) AtomicStruct() {}

// AtomicStruct marks TypedLocalObjectReference as owned as a whole.
func (TypedLocalObjectReference) AtomicStruct() {}

// AtomicStruct marks ScopeSelector as owned as a whole.
func (ScopeSelector) AtomicStruct() {}
