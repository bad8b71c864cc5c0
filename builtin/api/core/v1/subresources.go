package v1

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// bindingSubresource serves POST pods/NAME/binding: it assigns an unbound pod to
// a node (sets spec.nodeName and the PodScheduled condition), as schedulers do.
type bindingSubresource struct{}

var _ registry.Subresource = bindingSubresource{}

func (bindingSubresource) Verbs() []string { return []string{"create"} }

func (bindingSubresource) Kind() api.GroupVersionKind { return GroupVersion().WithKind("Binding") }

func (bindingSubresource) Serve(w http.ResponseWriter, r *http.Request, p registry.Parent) error {
	if r.Method != http.MethodPost {
		return apierrors.NewMethodNotSupported(api.GroupResource{Resource: "pods/binding"}, r.Method)
	}
	body, err := p.DecodeBody(r, reflect.TypeFor[Binding]())
	if err != nil {
		return err
	}
	b, err := registry.FromMap[Binding](body)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("decode Binding: %v", err))
	}
	if b.Name != "" && b.Name != p.Name() {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the binding (%s) does not match the pod (%s)", b.Name, p.Name()))
	}
	if b.Target.Name == "" || (b.Target.Kind != "" && b.Target.Kind != "Node") {
		return apierrors.NewInvalid(api.GroupKind{Kind: "Binding"}, p.Name(), field.ErrorList{
			field.Required(field.NewPath("target", "name"), "a node name is required")})
	}
	_, err = p.Update(r.Context(), func(obj map[string]any) error {
		if api.NestedString(obj, "metadata", "deletionTimestamp") != "" {
			return apierrors.NewConflict(api.GroupResource{Resource: "pods/binding"}, p.Name(), "pod is being deleted, cannot be assigned to a host")
		}
		if n := api.NestedString(obj, "spec", "nodeName"); n != "" {
			return apierrors.NewConflict(api.GroupResource{Resource: "pods/binding"}, p.Name(),
				fmt.Sprintf("pod %s is already assigned to node %q", p.Name(), n))
		}
		api.SetNestedField(obj, b.Target.Name, "spec", "nodeName")
		setPodScheduled(obj)
		return nil
	})
	if err != nil {
		return err
	}
	writeSuccess(w, http.StatusCreated)
	return nil
}

func setPodScheduled(obj map[string]any) {
	now := api.Now()
	cond := map[string]any{"type": "PodScheduled", "status": "True", "lastProbeTime": nil,
		"lastTransitionTime": now.UTC().Format("2006-01-02T15:04:05Z")}
	conds := api.NestedSlice(obj, "status", "conditions")
	for i, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "PodScheduled" {
			conds[i] = cond
			api.SetNestedField(obj, conds, "status", "conditions")
			return
		}
	}
	api.SetNestedField(obj, append(conds, cond), "status", "conditions")
}

// evictionSubresource serves POST pods/NAME/eviction (policy/v1 Eviction): a
// delete with the eviction's DeleteOptions. It does not consult disruption
// budgets (core/v1 knows no policy/v1): the control plane replaces it with
// builtin/eviction, which does.
type evictionSubresource struct{}

var _ registry.Subresource = evictionSubresource{}

func (evictionSubresource) Verbs() []string { return []string{"create"} }

func (evictionSubresource) Kind() api.GroupVersionKind {
	return api.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"}
}

// eviction mirrors policy/v1 Eviction for decoding (core/v1 must not import policy).
type eviction struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	DeleteOptions  *api.DeleteOptions `json:"deleteOptions,omitempty" protobuf:"bytes,2,opt,name=deleteOptions"`
}

func (evictionSubresource) Serve(w http.ResponseWriter, r *http.Request, p registry.Parent) error {
	if r.Method != http.MethodPost {
		return apierrors.NewMethodNotSupported(api.GroupResource{Resource: "pods/eviction"}, r.Method)
	}
	body, err := p.DecodeBody(r, reflect.TypeFor[eviction]())
	if err != nil {
		return err
	}
	ev, err := registry.FromMap[eviction](body)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("decode Eviction: %v", err))
	}
	if ev.Name != p.Name() {
		return apierrors.NewBadRequest(fmt.Sprintf("name in URL does not match name in Eviction object: %s != %s", p.Name(), ev.Name))
	}
	if err := p.Delete(r.Context(), ev.DeleteOptions); err != nil {
		return err
	}
	writeSuccess(w, http.StatusCreated)
	return nil
}

func writeSuccess(w http.ResponseWriter, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":` + fmt.Sprint(code) + "}\n"))
}

func writeObject(w http.ResponseWriter, obj map[string]any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
	return nil
}
