package api

import "encoding/json"

// TypeMeta carries an object's apiVersion and kind.
type TypeMeta struct {
	Kind       string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,1,opt,name=apiVersion"`
}

// GroupVersionKind parses apiVersion and kind; an unparsable apiVersion yields an
// empty group and version.
func (t *TypeMeta) GroupVersionKind() GroupVersionKind {
	gv, _ := ParseGroupVersion(t.APIVersion)
	return gv.WithKind(t.Kind)
}

// SetGroupVersionKind sets apiVersion and kind.
func (t *TypeMeta) SetGroupVersionKind(gvk GroupVersionKind) {
	t.APIVersion = gvk.GroupVersion().String()
	t.Kind = gvk.Kind
}

// ObjectMeta is the metadata every persisted object carries. Field semantics follow
// Kubernetes: the server sets uid, resourceVersion, generation and timestamps.
type ObjectMeta struct {
	Name                       string               `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	GenerateName               string               `json:"generateName,omitempty" protobuf:"bytes,2,opt,name=generateName"`
	Namespace                  string               `json:"namespace,omitempty" protobuf:"bytes,3,opt,name=namespace"`
	SelfLink                   string               `json:"selfLink,omitempty" protobuf:"bytes,4,opt,name=selfLink"`
	UID                        string               `json:"uid,omitempty" protobuf:"bytes,5,opt,name=uid"`
	ResourceVersion            string               `json:"resourceVersion,omitempty" protobuf:"bytes,6,opt,name=resourceVersion"`
	Generation                 int64                `json:"generation,omitempty" protobuf:"varint,7,opt,name=generation"`
	CreationTimestamp          Time                 `json:"creationTimestamp,omitempty" protobuf:"bytes,8,opt,name=creationTimestamp"`
	DeletionTimestamp          *Time                `json:"deletionTimestamp,omitempty" protobuf:"bytes,9,opt,name=deletionTimestamp"`
	DeletionGracePeriodSeconds *int64               `json:"deletionGracePeriodSeconds,omitempty" protobuf:"varint,10,opt,name=deletionGracePeriodSeconds"`
	Labels                     map[string]string    `json:"labels,omitempty" protobuf:"bytes,11,rep,name=labels" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Annotations                map[string]string    `json:"annotations,omitempty" protobuf:"bytes,12,rep,name=annotations" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	OwnerReferences            []OwnerReference     `json:"ownerReferences,omitempty" patchStrategy:"merge" patchMergeKey:"uid" protobuf:"bytes,13,rep,name=ownerReferences"`
	Finalizers                 []string             `json:"finalizers,omitempty" patchStrategy:"merge" protobuf:"bytes,14,rep,name=finalizers"`
	ManagedFields              []ManagedFieldsEntry `json:"managedFields,omitempty" protobuf:"bytes,17,rep,name=managedFields"`
}

// OwnerReference points from a dependent to its owner, for garbage collection and
// for controllers' Owns().
type OwnerReference struct {
	APIVersion         string `json:"apiVersion" protobuf:"bytes,5,opt,name=apiVersion"`
	Kind               string `json:"kind" protobuf:"bytes,1,opt,name=kind"`
	Name               string `json:"name" protobuf:"bytes,3,opt,name=name"`
	UID                string `json:"uid" protobuf:"bytes,4,opt,name=uid"`
	Controller         *bool  `json:"controller,omitempty" protobuf:"varint,6,opt,name=controller"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty" protobuf:"varint,7,opt,name=blockOwnerDeletion"`
}

// ManagedFieldsEntry records which manager owns which fields. Converge keeps the
// entries clients send; FieldsV1 is opaque JSON.
type ManagedFieldsEntry struct {
	Manager     string    `json:"manager,omitempty" protobuf:"bytes,1,opt,name=manager"`
	Operation   string    `json:"operation,omitempty" protobuf:"bytes,2,opt,name=operation"`
	APIVersion  string    `json:"apiVersion,omitempty" protobuf:"bytes,3,opt,name=apiVersion"`
	Time        *Time     `json:"time,omitempty" protobuf:"bytes,4,opt,name=time"`
	FieldsType  string    `json:"fieldsType,omitempty" protobuf:"bytes,6,opt,name=fieldsType"`
	FieldsV1    *FieldsV1 `json:"fieldsV1,omitempty" protobuf:"bytes,7,opt,name=fieldsV1"`
	Subresource string    `json:"subresource,omitempty" protobuf:"bytes,8,opt,name=subresource"`
}

// FieldsV1 is the opaque JSON field set of a managedFields entry.
type FieldsV1 struct {
	Raw []byte `json:"-" protobuf:"bytes,1,opt,name=Raw"`
}

// MarshalJSON emits the raw JSON.
func (f FieldsV1) MarshalJSON() ([]byte, error) {
	if len(f.Raw) == 0 {
		return []byte("null"), nil
	}
	return f.Raw, nil
}

// UnmarshalJSON keeps the raw JSON.
func (f *FieldsV1) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		f.Raw = nil
		return nil
	}
	f.Raw = append(f.Raw[:0], b...)
	return nil
}

// ListMeta is the metadata of a list response.
type ListMeta struct {
	SelfLink           string `json:"selfLink,omitempty" protobuf:"bytes,1,opt,name=selfLink"`
	ResourceVersion    string `json:"resourceVersion,omitempty" protobuf:"bytes,2,opt,name=resourceVersion"`
	Continue           string `json:"continue,omitempty" protobuf:"bytes,3,opt,name=continue"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty" protobuf:"bytes,4,opt,name=remainingItemCount"`
}

// Object is what every API object offers: its kind and its metadata. Typed objects
// get it by embedding TypeMeta and ObjectMeta; Unstructured implements it over a map.
type Object interface {
	GroupVersionKind() GroupVersionKind
	SetGroupVersionKind(GroupVersionKind)

	GetName() string
	SetName(string)
	GetGenerateName() string
	GetNamespace() string
	SetNamespace(string)
	GetUID() string
	GetResourceVersion() string
	SetResourceVersion(string)
	GetGeneration() int64
	GetCreationTimestamp() Time
	GetDeletionTimestamp() *Time
	GetLabels() map[string]string
	SetLabels(map[string]string)
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
	GetFinalizers() []string
	SetFinalizers([]string)
	GetOwnerReferences() []OwnerReference
	SetOwnerReferences([]OwnerReference)
}

// GetName returns metadata.name.
func (m *ObjectMeta) GetName() string { return m.Name }

// SetName sets metadata.name.
func (m *ObjectMeta) SetName(v string) { m.Name = v }

// GetGenerateName returns metadata.generateName.
func (m *ObjectMeta) GetGenerateName() string { return m.GenerateName }

// GetNamespace returns metadata.namespace.
func (m *ObjectMeta) GetNamespace() string { return m.Namespace }

// SetNamespace sets metadata.namespace.
func (m *ObjectMeta) SetNamespace(v string) { m.Namespace = v }

// GetUID returns metadata.uid.
func (m *ObjectMeta) GetUID() string { return m.UID }

// GetResourceVersion returns metadata.resourceVersion.
func (m *ObjectMeta) GetResourceVersion() string { return m.ResourceVersion }

// SetResourceVersion sets metadata.resourceVersion.
func (m *ObjectMeta) SetResourceVersion(v string) { m.ResourceVersion = v }

// GetGeneration returns metadata.generation.
func (m *ObjectMeta) GetGeneration() int64 { return m.Generation }

// GetCreationTimestamp returns metadata.creationTimestamp.
func (m *ObjectMeta) GetCreationTimestamp() Time { return m.CreationTimestamp }

// GetDeletionTimestamp returns metadata.deletionTimestamp.
func (m *ObjectMeta) GetDeletionTimestamp() *Time { return m.DeletionTimestamp }

// GetLabels returns metadata.labels.
func (m *ObjectMeta) GetLabels() map[string]string { return m.Labels }

// SetLabels sets metadata.labels.
func (m *ObjectMeta) SetLabels(v map[string]string) { m.Labels = v }

// GetAnnotations returns metadata.annotations.
func (m *ObjectMeta) GetAnnotations() map[string]string { return m.Annotations }

// SetAnnotations sets metadata.annotations.
func (m *ObjectMeta) SetAnnotations(v map[string]string) { m.Annotations = v }

// GetFinalizers returns metadata.finalizers.
func (m *ObjectMeta) GetFinalizers() []string { return m.Finalizers }

// SetFinalizers sets metadata.finalizers.
func (m *ObjectMeta) SetFinalizers(v []string) { m.Finalizers = v }

// GetOwnerReferences returns metadata.ownerReferences.
func (m *ObjectMeta) GetOwnerReferences() []OwnerReference { return m.OwnerReferences }

// SetOwnerReferences sets metadata.ownerReferences.
func (m *ObjectMeta) SetOwnerReferences(v []OwnerReference) { m.OwnerReferences = v }

// MetaFromMap decodes the metadata of an object held as JSON-compatible map.
func MetaFromMap(obj map[string]any) (ObjectMeta, error) {
	var m ObjectMeta
	raw, ok := obj["metadata"]
	if !ok || raw == nil {
		return m, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return m, err
	}
	err = json.Unmarshal(b, &m)
	return m, err
}

// Ptr returns a pointer to v, for optional fields.
func Ptr[T any](v T) *T { return &v }
