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
// version.

// view is the version one request reads objects in.
type view struct {
	version string // group/version; "" when the resource has no conversion
	gv      api.GroupVersion
	convert func(obj map[string]any, to api.GroupVersion) (map[string]any, error)
}

// viewOf returns the view of requests for res.
func viewOf(res *registry.Resource) view {
	if res.Convert == nil {
		return view{}
	}
	return view{version: res.GroupVersion.String(), gv: res.GroupVersion, convert: res.Convert}
}

// identity reports whether o is served as stored.
func (v view) identity(o *cachedObject) bool { return v.convert == nil || o.apiVersion == v.version }

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

// object converts a decoded object (owned by the caller) to the view's version.
func (v view) object(m map[string]any) (map[string]any, error) {
	if v.convert == nil {
		return m, nil
	}
	if av, _ := m["apiVersion"].(string); av == v.version {
		return m, nil
	}
	out, err := v.convert(m, v.gv)
	if err != nil {
		// Reported as is: Convert's errors name the conversion ("conversion
		// webhook for G/V, Kind=K failed: ..."), as Kubernetes reports them.
		return nil, err
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
