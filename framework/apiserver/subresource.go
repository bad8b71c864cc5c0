package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/patch"
	"github.com/converge-dev/converge/framework/storage"
)

// serveStatus serves GET/PUT/PATCH on /status: reads return the whole object,
// writes change only status.
func (s *Server) serveStatus(q *request) error {
	switch q.r.Method {
	case http.MethodGet:
		return s.serveGet(q)
	case http.MethodPut:
		return s.serveUpdate(q, updateStatus)
	case http.MethodPatch:
		return s.servePatch(q, updateStatus)
	}
	return apierrors.NewMethodNotSupported(q.groupResource(), strings.ToLower(q.r.Method))
}

// scaleOf renders the autoscaling/v1 Scale of obj.
func (s *Server) scaleOf(q *request, obj map[string]any) (map[string]any, error) {
	sc := q.res.Scale
	spec, _ := api.NestedInt64(obj, sc.SpecReplicasPath...)
	status, _ := api.NestedInt64(obj, sc.StatusReplicasPath...)
	selector := ""
	if sc.SelectorFromObject != nil {
		selector = sc.SelectorFromObject(obj)
	} else if len(sc.LabelSelectorPath) > 0 {
		selector = api.NestedString(obj, sc.LabelSelectorPath...)
	}
	meta := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := metaOf(obj)[k]; ok {
			meta[k] = v
		}
	}
	st := map[string]any{"replicas": status}
	if selector != "" {
		st["selector"] = selector
	}
	return map[string]any{
		"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,
		"spec": map[string]any{"replicas": spec}, "status": st,
	}, nil
}

// serveScale serves the scale subresource: writes set the parent's replicas.
func (s *Server) serveScale(q *request) error {
	name := q.ri.name
	switch q.r.Method {
	case http.MethodGet:
		kv, err := s.opts.Storage.Get(q.ctx(), storageKey(q.res, q.ri.namespace, name))
		if errors.Is(err, storage.ErrNotFound) {
			return q.notFound(name)
		}
		if err != nil {
			return internalError("%v", err)
		}
		obj, err := decodeFor(q, kv.Value, kv.ModRevision)
		if err != nil {
			return internalError("%v", err)
		}
		sc, err := s.scaleOf(q, obj)
		if err != nil {
			return err
		}
		writeJSON(q.w, http.StatusOK, sc)
		return nil
	case http.MethodPut, http.MethodPatch:
	default:
		return apierrors.NewMethodNotSupported(q.groupResource(), strings.ToLower(q.r.Method))
	}
	body, err := s.readBody(q.r)
	if err != nil {
		return err
	}
	media := contentType(q.r)
	if q.r.Method == http.MethodPatch && media == mediaJSONPatch {
		if err := checkJSONPatchSize(body); err != nil {
			return err
		}
	}
	if q.r.Method == http.MethodPatch && media == mediaApplyPatch {
		return s.serveScaleApply(q, body)
	}
	scaleGK := api.GroupKind{Group: "autoscaling", Kind: "Scale"}
	out, err := s.guaranteedUpdate(q.ctx(), q, name, updateMain, func(cur map[string]any, curRV int64) (map[string]any, error) {
		curScale, err := s.scaleOf(q, cur)
		if err != nil {
			return nil, err
		}
		var next map[string]any
		if q.r.Method == http.MethodPut {
			next, err = s.decodeScale(body, media)
			if err != nil {
				return nil, err
			}
			if err := checkScaleBody(next, name); err != nil {
				return nil, err
			}
		} else {
			doc, _ := json.Marshal(curScale)
			var pb []byte
			switch media {
			case mediaJSONPatch:
				pb, err = patch.JSONPatch(doc, body)
			case mediaMergePatch, mediaStrategicPatch:
				pb, err = patch.MergePatch(doc, body)
			default:
				return nil, apierrors.NewUnsupportedMediaType(media, []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch})
			}
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			next, err = api.DecodeMap(pb)
			if err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
			if err := checkScaleBody(next, name); err != nil {
				return nil, err
			}
		}
		if rvs := api.NestedString(next, "metadata", "resourceVersion"); rvs != "" && rvs != strconv.FormatInt(curRV, 10) {
			return nil, apierrors.NewConflict(q.groupResource(), name, apierrors.OptimisticLockMessage)
		}
		if spec, ok := next["spec"]; ok && spec != nil {
			if _, isMap := spec.(map[string]any); !isMap {
				return nil, apierrors.NewInvalid(scaleGK, name, field.ErrorList{field.Invalid(field.NewPath("spec"), fmt.Sprint(spec), "must be an object")})
			}
		}
		replicas, ok := api.NestedInt64(next, "spec", "replicas")
		if !ok {
			if _, present := api.NestedField(next, "spec", "replicas"); present {
				return nil, apierrors.NewInvalid(scaleGK, name, field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), fmt.Sprint(api.NestedMap(next, "spec")["replicas"]), "must be an integer")})
			}
		}
		if replicas < 0 {
			return nil, apierrors.NewInvalid(scaleGK, name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), replicas, "must be greater than or equal to 0")})
		}
		api.SetNestedField(cur, replicas, q.res.Scale.SpecReplicasPath...)
		return cur, nil
	})
	if err != nil {
		return err
	}
	sc, err := s.scaleOf(q, out)
	if err != nil {
		return err
	}
	writeJSON(q.w, http.StatusOK, sc)
	return nil
}

// scaleMessage is autoscaling/v1 Scale as its protobuf message, for decoding
// scale writes that client-go's typed UpdateScale sends as protobuf.
type scaleMessage struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec           struct {
		Replicas int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	} `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status struct {
		Replicas int32  `json:"replicas" protobuf:"varint,1,opt,name=replicas"`
		Selector string `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`
	} `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// decodeScale decodes the body of a scale PUT (JSON, YAML or protobuf).
func (s *Server) decodeScale(body []byte, media string) (map[string]any, error) {
	switch media {
	case mediaJSON, mediaYAML:
		return decodeJSONOrYAML(body, media)
	case mediaProtobuf:
		tm, m, err := s.proto.Decode(body, reflect.TypeFor[scaleMessage]())
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
		}
		m["apiVersion"], m["kind"] = tm.APIVersion, tm.Kind
		return m, nil
	}
	return nil, apierrors.NewUnsupportedMediaType(media, []string{mediaJSON, mediaYAML, mediaProtobuf})
}

// serveScaleApply serves server-side apply of an autoscaling/v1 Scale, as
// Kubernetes does: the applied replicas become the parent's, and the applier
// owns the parent's replicas field in its managedFields, in an entry for the
// scale subresource, so it conflicts with another manager of that field
// unless forced. The configuration may leave out its name (client-go's
// ApplyScale does); a different name is refused.
func (s *Server) serveScaleApply(q *request, body []byte) error {
	name := q.ri.name
	if q.query.Get("fieldManager") == "" {
		return apierrors.NewBadRequest("PATCH requests with the apply content type require a fieldManager query parameter")
	}
	config, err := decodeJSONOrYAML(body, mediaApplyPatch)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if api.NestedString(config, "metadata", "name") == "" {
		api.SetNestedField(config, name, "metadata", "name")
	}
	if err := checkScaleBody(config, name); err != nil {
		return err
	}
	scaleGK := api.GroupKind{Group: "autoscaling", Kind: "Scale"}
	// The applied Scale as the parent's configuration: its replicas only.
	parent := map[string]any{"apiVersion": q.res.GroupVersion.String(), "kind": q.res.Kind,
		"metadata": map[string]any{"name": name}}
	if q.ri.namespace != "" {
		api.SetNestedField(parent, q.ri.namespace, "metadata", "namespace")
	}
	if v, present := api.NestedField(config, "spec", "replicas"); present {
		replicas, ok := api.NestedInt64(config, "spec", "replicas")
		if !ok {
			return apierrors.NewInvalid(scaleGK, name, field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), fmt.Sprint(v), "must be an integer")})
		}
		if replicas < 0 {
			return apierrors.NewInvalid(scaleGK, name, field.ErrorList{
				field.Invalid(field.NewPath("spec", "replicas"), replicas, "must be greater than or equal to 0")})
		}
		api.SetNestedField(parent, replicas, q.res.Scale.SpecReplicasPath...)
	}
	fm := s.fieldManagerFor(q, updateMain)
	if fm == nil {
		return apierrors.NewUnsupportedMediaType(mediaApplyPatch, []string{mediaJSONPatch, mediaMergePatch, mediaStrategicPatch})
	}
	q.applied = true
	manager, force := q.query.Get("fieldManager"), isTrue(q.query.Get("force"))
	out, err := s.guaranteedUpdate(q.ctx(), q, name, updateMain, func(cur map[string]any, curRV int64) (map[string]any, error) {
		if rvs := api.NestedString(config, "metadata", "resourceVersion"); rvs != "" && rvs != strconv.FormatInt(curRV, 10) {
			return nil, apierrors.NewConflict(q.groupResource(), name, apierrors.OptimisticLockMessage)
		}
		next, _, err := fm.Apply(cur, parent, manager, force)
		return next, s.applyError(q, err)
	})
	if err != nil {
		return err
	}
	sc, err := s.scaleOf(q, out)
	if err != nil {
		return err
	}
	writeJSON(q.w, http.StatusOK, sc)
	return nil
}

// checkScaleBody checks what a scale write carries besides replicas, as
// Kubernetes does: an autoscaling/v1 Scale (apiVersion and kind may be left
// out) named like the URL.
func checkScaleBody(obj map[string]any, name string) error {
	scaleGK := api.GroupKind{Group: "autoscaling", Kind: "Scale"}
	if av, ok := obj["apiVersion"]; ok && av != "autoscaling/v1" && av != "" && av != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%v) does not match the expected API version (autoscaling/v1)", av))
	}
	if k, ok := obj["kind"]; ok && k != "Scale" && k != "" && k != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%v) does not match the expected kind (Scale)", k))
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok && obj["metadata"] != nil {
		return apierrors.NewBadRequest("the object provided is unrecognized: metadata must be an object")
	}
	switch n, _ := meta["name"].(string); n {
	case name:
	case "":
		return apierrors.NewInvalid(scaleGK, name, field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name or generateName is required")})
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	return nil
}

// serveCreateAs serves a create of a resource whose objects act on another
// object rather than being stored (registry.Resource.CreateAs): the body names
// that object and the request is served by its subresource, as if posted to
// RESOURCE/NAME/SUBRESOURCE.
func (s *Server) serveCreateAs(q *request) error {
	ref := q.res.CreateAs
	target := s.opts.Registry.Get(q.ri.gv.WithResource(ref.Resource))
	var sub registry.Subresource
	if target != nil {
		sub = target.Subresources[ref.Subresource]
	}
	if sub == nil {
		return internalError("%s is served as %s/%s, which is not registered", q.ri.resource, ref.Resource, ref.Subresource)
	}
	body, err := s.readBody(q.r)
	if err != nil {
		return err
	}
	rewind := func() {
		q.r.Body = io.NopCloser(bytes.NewReader(body))
		q.r.ContentLength = int64(len(body))
	}
	rewind()
	m, err := (&parent{s: s, q: q, kind: q.res.Kind}).DecodeBody(q.r, q.res.Type)
	if err != nil {
		return err
	}
	name := api.NestedString(m, "metadata", "name")
	if name == "" {
		return apierrors.NewInvalid(q.groupKind(), "", field.ErrorList{field.Required(field.NewPath("metadata", "name"), "name is required")})
	}
	if ns := api.NestedString(m, "metadata", "namespace"); ns != "" && ns != q.ri.namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the provided object (%s) does not match the namespace sent on the request (%s)", ns, q.ri.namespace))
	}
	rewind()
	ri := q.ri
	ri.resource, ri.name, ri.subresource = ref.Resource, name, ref.Subresource
	tq := &request{w: q.w, r: q.r, ri: ri, res: target, query: q.query}
	return sub.Serve(q.w, q.r, &parent{s: s, q: tq, kind: sub.Kind().Kind})
}

// parent implements registry.Parent for custom subresources.
type parent struct {
	s    *Server
	q    *request
	kind string // the subresource's kind, which a body may name
}

func (p *parent) Name() string      { return p.q.ri.name }
func (p *parent) Namespace() string { return p.q.ri.namespace }

func (p *parent) Get(ctx context.Context) (map[string]any, error) {
	kv, err := p.s.opts.Storage.Get(ctx, storageKey(p.q.res, p.q.ri.namespace, p.q.ri.name))
	if errors.Is(err, storage.ErrNotFound) {
		return nil, p.q.notFound(p.q.ri.name)
	}
	if err != nil {
		return nil, internalError("%v", err)
	}
	return decodeFor(p.q, kv.Value, kv.ModRevision)
}

func (p *parent) Update(ctx context.Context, mutate func(obj map[string]any) error) (map[string]any, error) {
	return p.update(ctx, p.q, mutate)
}

func (p *parent) UpdateSpec(ctx context.Context, mutate func(obj map[string]any) error) (map[string]any, error) {
	q := *p.q
	q.specWrite = true
	return p.update(ctx, &q, mutate)
}

func (p *parent) update(ctx context.Context, q *request, mutate func(obj map[string]any) error) (map[string]any, error) {
	return p.s.guaranteedUpdate(ctx, q, q.ri.name, updateStatusAndSpec, func(cur map[string]any, _ int64) (map[string]any, error) {
		if err := mutate(cur); err != nil {
			return nil, err
		}
		return cur, nil
	})
}

func (p *parent) Delete(ctx context.Context, opts *api.DeleteOptions) error {
	if opts == nil {
		opts = &api.DeleteOptions{}
	}
	if err := validateDeleteOptions(opts); err != nil {
		return err
	}
	q := p.q
	if slices.Contains(opts.DryRun, "All") && !q.dryRun() {
		dry := *q
		dry.query = maps.Clone(q.query)
		dry.query["dryRun"] = []string{"All"}
		q = &dry
	}
	_, _, err := p.s.deleteObject(ctx, q, p.q.ri.name, opts)
	return err
}

func (p *parent) DecodeBody(r *http.Request, t reflect.Type) (map[string]any, error) {
	body, err := p.s.readBody(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if contentType(r) == mediaProtobuf {
		if t == nil {
			return nil, apierrors.NewUnsupportedMediaType(mediaProtobuf, []string{mediaJSON, mediaYAML})
		}
		tm, pm, err := p.s.proto.Decode(body, t)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized: %v", err))
		}
		pm["apiVersion"], pm["kind"] = tm.APIVersion, tm.Kind
		m = pm
	} else if m, err = decodeJSONOrYAML(body, contentType(r)); err != nil {
		return nil, err
	}
	// The body may leave its kind out, but must not name another one.
	if k, ok := m["kind"]; ok && k != nil && k != "" && k != p.kind {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%v) does not match the expected kind (%s)", k, p.kind))
	}
	if v, ok := m["metadata"]; ok && v != nil {
		if _, isMap := v.(map[string]any); !isMap {
			return nil, apierrors.NewBadRequest("the object provided is unrecognized: metadata must be an object")
		}
	}
	return m, nil
}

var _ = labels.Everything
