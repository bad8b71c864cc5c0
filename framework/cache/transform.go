package cache

import "github.com/converge-dev/converge/framework/api"

// StripManagedFields removes metadata.managedFields from obj (a typed object
// or *api.Unstructured) and returns it. As a Transform (or a SharedInformers'
// DefaultTransform) it keeps the cache from holding the field-ownership
// records, often a third of a small object, that controllers do not read.
// An update built from a stripped object still keeps the server's entries:
// a write without managedFields leaves them as they are.
func StripManagedFields(obj api.Object) api.Object {
	switch o := obj.(type) {
	case *api.Unstructured:
		if meta, ok := o.Object["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
	case interface {
		SetManagedFields([]api.ManagedFieldsEntry)
	}:
		o.SetManagedFields(nil)
	}
	return obj
}
