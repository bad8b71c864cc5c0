package apiserver

import (
	"encoding/json"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Versions (registry.Resource.Convert): objects are stored in the resource's
// storage version and converted to the request's version when read. The watch
// cache keeps the stored form; each object and watch frame is rendered once per
// requested version (see cachedObject.frame) and shared by every reader of that
// version. A list, and a watch's initial events, convert the items they need
// with one registry.Resource.ConvertList call when the resource has one (see
// view.renderAll); single objects (get, watch events, writes) use Convert.

// view is the version one request reads objects in.
type view struct {
	version string // group/version; "" when the resource has no conversion
	gv      api.GroupVersion
	convert func(obj map[string]any, to api.GroupVersion) (map[string]any, error)
	// convertList converts several objects at once (registry.Resource.ConvertList); may be nil.
	convertList func(objs []map[string]any, to api.GroupVersion) ([]map[string]any, error)
	// defaults fills in defaults on read (registry.Resource.ReadDefaults); may be nil.
	defaults func(obj map[string]any)
	// key names the renderings of this view in the objects' caches: the
	// version, and the defaults' key when there are read defaults.
	key string
}

// viewOf returns the view of requests for res.
func viewOf(res *registry.Resource) view {
	if res.Convert == nil && res.ReadDefaults == nil {
		return view{}
	}
	v := view{version: res.GroupVersion.String(), gv: res.GroupVersion, convert: res.Convert, convertList: res.ConvertList,
		defaults: res.ReadDefaults}
	v.key = v.version
	if v.defaults != nil {
		v.key += "|" + res.ReadDefaultsKey
	}
	return v
}

// identity reports whether o is served as stored.
func (v view) identity(o *cachedObject) bool {
	return v.convert == nil && v.defaults == nil || v.defaults == nil && o.apiVersion == v.version
}

// rendersStored reports whether a stored object of apiVersion av is served
// other than as stored (converted, or with read defaults).
func (v view) rendersStored(av string) bool {
	return v.defaults != nil || v.convert != nil && av != v.version
}

// render converts stored JSON (resourceVersion included) to the view's version.
func (v view) render(data []byte) ([]byte, error) {
	m, err := api.DecodeMap(data)
	if err != nil {
		return nil, fmt.Errorf("decode stored object: %w", err)
	}
	out, err := v.object(m)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode converted object: %w", err)
	}
	return b, nil
}

// renderAll renders, with one ConvertList call, every object of objs that v does
// not serve as stored and that has no rendering in v's version yet, and keeps
// each result in the object's per-version cache (cachedObject.converted), where
// dataFor and frame then find it. This is how a list (and a watch's initial
// events) converts its items: one ConversionReview for all of them rather than
// one per object. Without ConvertList it does nothing: each object is converted
// when it is read. On an error nothing is cached.
func (v view) renderAll(objs []*cachedObject) error {
	if v.convertList == nil {
		return nil
	}
	var todo []*cachedObject
	var in []map[string]any
	for _, o := range objs {
		if v.identity(o) || o.apiVersion == v.version || o.hasConverted(v.key) {
			continue // served as stored, or converted alone (read defaults only), or done
		}
		m, err := api.DecodeMap(o.data)
		if err != nil {
			return fmt.Errorf("decode stored object: %w", err)
		}
		todo = append(todo, o)
		in = append(in, m)
	}
	if len(todo) == 0 {
		return nil
	}
	out, err := v.convertList(in, v.gv)
	if err != nil {
		return err // named like Convert's errors
	}
	if len(out) != len(todo) {
		return fmt.Errorf("converting %d objects to %s returned %d", len(todo), v.version, len(out))
	}
	data := make([][]byte, len(out))
	for i, m := range out {
		if v.defaults != nil {
			v.defaults(m)
		}
		if data[i], err = json.Marshal(m); err != nil {
			return fmt.Errorf("encode converted object: %w", err)
		}
	}
	for i, o := range todo {
		o.storeConverted(v.key, data[i])
	}
	return nil
}

// object converts a decoded object (owned by the caller) to the view's version.
func (v view) object(m map[string]any) (map[string]any, error) {
	out := m
	if av, _ := m["apiVersion"].(string); v.convert != nil && av != v.version {
		var err error
		if out, err = v.convert(m, v.gv); err != nil {
			// Reported as is: Convert's errors name the conversion ("conversion
			// webhook for G/V, Kind=K failed: ..."), as Kubernetes reports them.
			return nil, err
		}
	}
	if v.defaults != nil {
		v.defaults(out)
	}
	return out, nil
}

// decodeFor decodes a stored value in the version of q's resource.
func decodeFor(q *request, value []byte, rv int64) (map[string]any, error) {
	m, err := decodeStored(value, rv)
	if err != nil {
		return nil, err
	}
	return viewOf(q.res).object(m)
}

// toStorage converts obj (owned by the caller) to the storage version of res.
func toStorage(res *registry.Resource, obj map[string]any) (map[string]any, error) {
	if res.Convert == nil {
		return obj, nil
	}
	sgv := res.StorageGroupVersion()
	if av, _ := obj["apiVersion"].(string); av == sgv.String() {
		return obj, nil
	}
	out, err := res.Convert(obj, sgv)
	if err != nil {
		return nil, err
	}
	return out, nil
}
