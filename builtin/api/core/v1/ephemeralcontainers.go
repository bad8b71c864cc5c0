package v1

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/patch"
)

// ephemeralContainersSubresource serves pods/NAME/ephemeralcontainers as
// Kubernetes does: GET returns the pod; PUT and PATCH (JSON, merge or
// strategic merge patch of the whole Pod) change spec.ephemeralContainers and
// nothing else, which may only grow (ValidatePodEphemeralContainersUpdate).
// The node agent running the pod starts the containers added.
type ephemeralContainersSubresource struct{}

var _ registry.Subresource = ephemeralContainersSubresource{}

var ephemeralGR = api.GroupResource{Resource: "pods/ephemeralcontainers"}

func (ephemeralContainersSubresource) Verbs() []string { return []string{"get", "patch", "update"} }

func (ephemeralContainersSubresource) Kind() api.GroupVersionKind {
	return GroupVersion().WithKind("Pod")
}

// maxPatchBytes bounds a patch body, as the API server bounds request bodies.
const maxPatchBytes = 3 << 20

func (ephemeralContainersSubresource) Serve(w http.ResponseWriter, r *http.Request, p registry.Parent) error {
	ctx := r.Context()
	var next func(cur map[string]any) (map[string]any, error)
	switch r.Method {
	case http.MethodGet:
		obj, err := p.Get(ctx)
		if err != nil {
			return err
		}
		return writeObject(w, obj)
	case http.MethodPut:
		body, err := p.DecodeBody(r, reflect.TypeFor[Pod]())
		if err != nil {
			return err
		}
		if n := api.NestedString(body, "metadata", "name"); n != p.Name() {
			return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, p.Name()))
		}
		next = func(map[string]any) (map[string]any, error) { return body, nil }
	case http.MethodPatch:
		media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		types := []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxPatchBytes+1))
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("read the patch: %v", err))
		}
		if len(body) > maxPatchBytes {
			return apierrors.NewRequestEntityTooLarge("the patch is too large")
		}
		var apply func(doc []byte) ([]byte, error)
		switch media {
		case types[0]:
			apply = func(doc []byte) ([]byte, error) { return patch.JSONPatch(doc, body) }
		case types[1]:
			apply = func(doc []byte) ([]byte, error) { return patch.MergePatch(doc, body) }
		case types[2]:
			apply = func(doc []byte) ([]byte, error) { return patch.StrategicMergePatch(doc, body, reflect.TypeFor[Pod]()) }
		default:
			return apierrors.NewUnsupportedMediaType(media, types)
		}
		next = func(cur map[string]any) (map[string]any, error) {
			doc, err := json.Marshal(cur)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			out, err := apply(doc)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("apply the patch to pod %s: %v", p.Name(), err))
			}
			m, err := api.DecodeMap(out)
			if err != nil {
				return nil, apierrors.NewBadRequest("the patch produced a document that is not an object: " + err.Error())
			}
			return m, nil
		}
	default:
		return apierrors.NewMethodNotSupported(ephemeralGR, strings.ToLower(r.Method))
	}
	out, err := p.UpdateSpec(ctx, func(cur map[string]any) error {
		proposed, err := next(api.DeepCopyJSON(cur))
		if err != nil {
			return err
		}
		if rv := api.NestedString(proposed, "metadata", "resourceVersion"); rv != "" && rv != api.NestedString(cur, "metadata", "resourceVersion") {
			return apierrors.NewConflict(ephemeralGR, p.Name(), apierrors.OptimisticLockMessage)
		}
		if uid := api.NestedString(proposed, "metadata", "uid"); uid != "" && uid != api.NestedString(cur, "metadata", "uid") {
			return apierrors.NewConflict(ephemeralGR, p.Name(), "Precondition failed: UID in precondition: "+uid)
		}
		return setEphemeralContainers(cur, api.NestedSlice(proposed, "spec", "ephemeralContainers"))
	})
	if err != nil {
		return err
	}
	return writeObject(w, out)
}

// setEphemeralContainers replaces cur's spec.ephemeralContainers with list,
// defaulted, when the change is valid.
func setEphemeralContainers(cur map[string]any, list []any) error {
	old, err := registry.FromMap[Pod](cur)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("decode pod: %w", err))
	}
	raw, err := json.Marshal(list)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("encode spec.ephemeralContainers: %v", err))
	}
	var ecs []EphemeralContainer
	if err := json.Unmarshal(raw, &ecs); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("decode spec.ephemeralContainers: %v", err))
	}
	pod, err := roundTrip(old)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	pod.Spec.EphemeralContainers = ecs
	for i := range pod.Spec.EphemeralContainers {
		c := Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		defaultContainer(&c)
		pod.Spec.EphemeralContainers[i].EphemeralContainerCommon = EphemeralContainerCommon(c)
	}
	if errs := ValidatePodEphemeralContainersUpdate(pod, old); len(errs) > 0 {
		return apierrors.NewInvalid(api.GroupKind{Kind: "Pod"}, old.Name, errs)
	}
	m, err := registry.ToMap(map[string]any{"list": pod.Spec.EphemeralContainers})
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	if len(pod.Spec.EphemeralContainers) == 0 {
		if spec, ok := cur["spec"].(map[string]any); ok {
			delete(spec, "ephemeralContainers")
		}
		return nil
	}
	api.SetNestedField(cur, m["list"], "spec", "ephemeralContainers")
	return nil
}
