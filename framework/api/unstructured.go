package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Unstructured is an object held as a JSON-compatible map, for kinds without a Go
// type (custom resources) and for generic machinery. Numbers decoded by this
// package are int64 when integral and float64 otherwise.
type Unstructured struct {
	Object map[string]any
}

var _ Object = (*Unstructured)(nil)

// UnstructuredList is a list of Unstructured objects with its list metadata.
type UnstructuredList struct {
	APIVersion string
	Kind       string
	Metadata   ListMeta
	Items      []Unstructured
}

// MarshalJSON renders the list in Kubernetes shape.
func (l *UnstructuredList) MarshalJSON() ([]byte, error) {
	items := make([]map[string]any, len(l.Items))
	for i := range l.Items {
		items[i] = l.Items[i].Object
	}
	return json.Marshal(struct {
		APIVersion string           `json:"apiVersion,omitempty"`
		Kind       string           `json:"kind,omitempty"`
		Metadata   ListMeta         `json:"metadata"`
		Items      []map[string]any `json:"items"`
	}{l.APIVersion, l.Kind, l.Metadata, items})
}

// UnmarshalJSON decodes a Kubernetes list.
func (l *UnstructuredList) UnmarshalJSON(b []byte) error {
	var raw struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   ListMeta          `json:"metadata"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	l.APIVersion, l.Kind, l.Metadata = raw.APIVersion, raw.Kind, raw.Metadata
	l.Items = make([]Unstructured, len(raw.Items))
	for i, it := range raw.Items {
		m, err := DecodeMap(it)
		if err != nil {
			return err
		}
		l.Items[i].Object = m
	}
	return nil
}

// DecodeMap decodes a JSON object into a map, keeping integers as int64.
func DecodeMap(data []byte) (map[string]any, error) {
	if m, ok := decodeMapFast(data); ok {
		return m, nil
	}
	return decodeMapStd(data)
}

// DecodeMapUnique is DecodeMap also saying whether every object in data has
// each of its keys once; false when it cannot tell (DuplicateFields can). A
// request body decoded with it needs no DuplicateFields scan when true.
func DecodeMapUnique(data []byte) (m map[string]any, unique bool, err error) {
	if m, repeated, ok := (fastDecoder{data: data}).decodeMapRepeats(); ok {
		return m, !repeated, nil
	}
	m, err = decodeMapStd(data)
	return m, false, err
}

// DecodeMapWithoutManagedFields is DecodeMap without metadata.managedFields
// (read as JSON, not decoded), for readers of an object's other fields.
func DecodeMapWithoutManagedFields(data []byte) (map[string]any, error) {
	if m, ok := (fastDecoder{data: data, withoutManagedFields: true}).decodeMap(); ok {
		return m, nil
	}
	m, err := decodeMapStd(data)
	if err != nil {
		return nil, err
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	return m, nil
}

// DecodeMapHead is DecodeMapWithoutManagedFields keeping only apiVersion, kind
// and metadata (the other fields are read as JSON, not decoded), for readers
// of an object's metadata alone.
func DecodeMapHead(data []byte) (map[string]any, error) {
	if m, ok := (fastDecoder{data: data, withoutManagedFields: true, headOnly: true}).decodeMap(); ok {
		return m, nil
	}
	m, err := DecodeMapWithoutManagedFields(data)
	if err != nil {
		return nil, err
	}
	for k := range m {
		if !isHeadField(k) {
			delete(m, k)
		}
	}
	return m, nil
}

// decodeMapStd is DecodeMap by encoding/json, the reference for decodeMapFast.
func decodeMapStd(data []byte) (map[string]any, error) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	// Only whitespace may follow (More is false before a stray '}' or ']').
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON object")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %T", v)
	}
	return NormalizeNumbers(m).(map[string]any), nil
}

// NormalizeNumbers replaces json.Number values with int64 (when integral) or float64,
// recursively, and returns the result.
func NormalizeNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = NormalizeNumbers(e)
		}
		return t
	case []any:
		for i, e := range t {
			t[i] = NormalizeNumbers(e)
		}
		return t
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	default:
		return v
	}
}

// MarshalJSON renders the object map.
func (u *Unstructured) MarshalJSON() ([]byte, error) { return json.Marshal(u.Object) }

// UnmarshalJSON decodes into the object map.
func (u *Unstructured) UnmarshalJSON(b []byte) error {
	m, err := DecodeMap(b)
	if err != nil {
		return err
	}
	u.Object = m
	return nil
}

// DeepCopy returns an independent copy.
func (u *Unstructured) DeepCopy() *Unstructured {
	if u == nil {
		return nil
	}
	return &Unstructured{Object: DeepCopyJSON(u.Object)}
}

// EqualJSON reports whether a and b encode to the same JSON (maps with
// sorted keys), so values decoded with different Go number types, or a typed
// value and its decoded map, compare by what they say. Values that do not
// encode are never equal.
func EqualJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// DeepCopyJSON copies a JSON-compatible map.
func DeepCopyJSON(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return DeepCopyJSONValue(m).(map[string]any)
}

// DeepCopyJSONValue copies a JSON-compatible value.
func DeepCopyJSONValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = DeepCopyJSONValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = DeepCopyJSONValue(e)
		}
		return out
	default:
		return v
	}
}

// NestedField returns the value at path and whether it exists.
func NestedField(obj map[string]any, path ...string) (any, bool) {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// NestedString returns the string at path, or "".
func NestedString(obj map[string]any, path ...string) string {
	v, _ := NestedField(obj, path...)
	s, _ := v.(string)
	return s
}

// NestedMap returns the map at path, or nil.
func NestedMap(obj map[string]any, path ...string) map[string]any {
	v, _ := NestedField(obj, path...)
	m, _ := v.(map[string]any)
	return m
}

// NestedSlice returns the slice at path, or nil.
func NestedSlice(obj map[string]any, path ...string) []any {
	v, _ := NestedField(obj, path...)
	s, _ := v.([]any)
	return s
}

// NestedInt64 returns the integer at path and whether it is an integer.
func NestedInt64(obj map[string]any, path ...string) (int64, bool) {
	v, _ := NestedField(obj, path...)
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// NestedStringMap returns the map of strings at path (non-string values skipped).
func NestedStringMap(obj map[string]any, path ...string) map[string]string {
	m := NestedMap(obj, path...)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// SetNestedField sets value at path, creating intermediate maps.
func SetNestedField(obj map[string]any, value any, path ...string) {
	m := obj
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

// RemoveNestedField deletes the value at path if present.
func RemoveNestedField(obj map[string]any, path ...string) {
	m := obj
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, path[len(path)-1])
}

func (u *Unstructured) meta() map[string]any {
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	m, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		u.Object["metadata"] = m
	}
	return m
}

func (u *Unstructured) metaString(key string) string {
	s, _ := u.meta()[key].(string)
	return s
}

func (u *Unstructured) setMetaString(key, v string) {
	if v == "" {
		delete(u.meta(), key)
		return
	}
	u.meta()[key] = v
}

// GroupVersionKind parses apiVersion and kind.
func (u *Unstructured) GroupVersionKind() GroupVersionKind {
	av, _ := u.Object["apiVersion"].(string)
	k, _ := u.Object["kind"].(string)
	gv, _ := ParseGroupVersion(av)
	return gv.WithKind(k)
}

// SetGroupVersionKind sets apiVersion and kind.
func (u *Unstructured) SetGroupVersionKind(gvk GroupVersionKind) {
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	u.Object["apiVersion"] = gvk.GroupVersion().String()
	u.Object["kind"] = gvk.Kind
}

// GetName returns metadata.name.
func (u *Unstructured) GetName() string { return u.metaString("name") }

// SetName sets metadata.name.
func (u *Unstructured) SetName(v string) { u.setMetaString("name", v) }

// GetGenerateName returns metadata.generateName.
func (u *Unstructured) GetGenerateName() string { return u.metaString("generateName") }

// GetNamespace returns metadata.namespace.
func (u *Unstructured) GetNamespace() string { return u.metaString("namespace") }

// SetNamespace sets metadata.namespace.
func (u *Unstructured) SetNamespace(v string) { u.setMetaString("namespace", v) }

// GetUID returns metadata.uid.
func (u *Unstructured) GetUID() string { return u.metaString("uid") }

// GetResourceVersion returns metadata.resourceVersion.
func (u *Unstructured) GetResourceVersion() string { return u.metaString("resourceVersion") }

// SetResourceVersion sets metadata.resourceVersion.
func (u *Unstructured) SetResourceVersion(v string) { u.setMetaString("resourceVersion", v) }

// GetGeneration returns metadata.generation.
func (u *Unstructured) GetGeneration() int64 {
	g, _ := NestedInt64(u.Object, "metadata", "generation")
	return g
}

// GetCreationTimestamp returns metadata.creationTimestamp.
func (u *Unstructured) GetCreationTimestamp() Time {
	var t Time
	_ = t.UnmarshalJSON([]byte(`"` + u.metaString("creationTimestamp") + `"`))
	return t
}

// GetDeletionTimestamp returns metadata.deletionTimestamp.
func (u *Unstructured) GetDeletionTimestamp() *Time {
	s := u.metaString("deletionTimestamp")
	if s == "" {
		return nil
	}
	var t Time
	if err := t.UnmarshalJSON([]byte(`"` + s + `"`)); err != nil {
		return nil
	}
	return &t
}

// GetLabels returns metadata.labels.
func (u *Unstructured) GetLabels() map[string]string {
	return NestedStringMap(u.Object, "metadata", "labels")
}

// SetLabels sets metadata.labels.
func (u *Unstructured) SetLabels(v map[string]string) { u.setStringMap("labels", v) }

// GetAnnotations returns metadata.annotations.
func (u *Unstructured) GetAnnotations() map[string]string {
	return NestedStringMap(u.Object, "metadata", "annotations")
}

// SetAnnotations sets metadata.annotations.
func (u *Unstructured) SetAnnotations(v map[string]string) { u.setStringMap("annotations", v) }

func (u *Unstructured) setStringMap(key string, v map[string]string) {
	if len(v) == 0 {
		delete(u.meta(), key)
		return
	}
	m := make(map[string]any, len(v))
	for k, s := range v {
		m[k] = s
	}
	u.meta()[key] = m
}

// GetFinalizers returns metadata.finalizers.
func (u *Unstructured) GetFinalizers() []string {
	var out []string
	for _, v := range NestedSlice(u.Object, "metadata", "finalizers") {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// SetFinalizers sets metadata.finalizers.
func (u *Unstructured) SetFinalizers(v []string) {
	if len(v) == 0 {
		delete(u.meta(), "finalizers")
		return
	}
	s := make([]any, len(v))
	for i, f := range v {
		s[i] = f
	}
	u.meta()["finalizers"] = s
}

// GetOwnerReferences returns metadata.ownerReferences.
func (u *Unstructured) GetOwnerReferences() []OwnerReference {
	raw, ok := u.meta()["ownerReferences"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var refs []OwnerReference
	if json.Unmarshal(b, &refs) != nil {
		return nil
	}
	return refs
}

// SetOwnerReferences sets metadata.ownerReferences.
func (u *Unstructured) SetOwnerReferences(v []OwnerReference) {
	if len(v) == 0 {
		delete(u.meta(), "ownerReferences")
		return
	}
	b, _ := json.Marshal(v)
	var s []any
	_ = json.Unmarshal(b, &s)
	u.meta()["ownerReferences"] = s
}
