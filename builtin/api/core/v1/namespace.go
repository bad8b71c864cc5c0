package v1

import (
	"net/http"
	"reflect"
	"slices"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Namespace deletion follows Kubernetes: a namespace carries the `kubernetes`
// finalizer in spec.finalizers from its creation; DELETE marks it Terminating;
// the namespace controller empties it and removes its spec finalizer through the
// finalize subresource; the namespace goes once spec.finalizers and
// metadata.finalizers are both empty. Only finalize changes spec.finalizers.

// namespaceStrategy adds the spec finalizer on create and keeps spec.finalizers
// on ordinary updates.
type namespaceStrategy struct {
	registry.Typed[Namespace]
}

var _ registry.Preparer = namespaceStrategy{}

// PrepareForCreate adds the `kubernetes` finalizer.
func (namespaceStrategy) PrepareForCreate(obj map[string]any) {
	fs := stringsOf(api.NestedSlice(obj, "spec", "finalizers"))
	if !slices.Contains(fs, string(FinalizerKubernetes)) {
		fs = append(fs, string(FinalizerKubernetes))
	}
	api.SetNestedField(obj, anySlice(fs), "spec", "finalizers")
}

// PrepareForUpdate keeps spec.finalizers: only the finalize subresource changes them.
func (namespaceStrategy) PrepareForUpdate(obj, old map[string]any) {
	if fs, ok := api.NestedField(old, "spec", "finalizers"); ok {
		api.SetNestedField(obj, fs, "spec", "finalizers")
	} else {
		api.RemoveNestedField(obj, "spec", "finalizers")
	}
}

func namespaceDeletion() *registry.Deletion {
	return &registry.Deletion{
		Pending: func(obj map[string]any) bool { return len(api.NestedSlice(obj, "spec", "finalizers")) > 0 },
		Prepare: func(obj map[string]any) { api.SetNestedField(obj, string(NamespaceTerminating), "status", "phase") },
	}
}

// finalizeSubresource serves PUT namespaces/NAME/finalize, which replaces
// spec.finalizers (the namespace controller removes `kubernetes` with it).
type finalizeSubresource struct{}

var _ registry.Subresource = finalizeSubresource{}

func (finalizeSubresource) Verbs() []string { return []string{"update"} }

func (finalizeSubresource) Kind() api.GroupVersionKind { return GroupVersion().WithKind("Namespace") }

func (finalizeSubresource) Serve(w http.ResponseWriter, r *http.Request, p registry.Parent) error {
	if r.Method != http.MethodPut {
		return apierrors.NewMethodNotSupported(api.GroupResource{Resource: "namespaces/finalize"}, r.Method)
	}
	body, err := p.DecodeBody(r, reflect.TypeFor[Namespace]())
	if err != nil {
		return err
	}
	fs, hasFinalizers := api.NestedField(body, "spec", "finalizers")
	out, err := p.Update(r.Context(), func(obj map[string]any) error {
		if hasFinalizers && fs != nil {
			api.SetNestedField(obj, fs, "spec", "finalizers")
		} else {
			api.RemoveNestedField(obj, "spec", "finalizers")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeObject(w, out)
}

func stringsOf(v []any) []string {
	out := make([]string, 0, len(v))
	for _, e := range v {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func anySlice(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}
