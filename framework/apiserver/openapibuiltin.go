package apiserver

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// The definitions of the kinds without a Resource.Schema (Options.OpenAPIDefinitions:
// the built-in kinds, generated from their Go types), published beside the
// custom resources' schemas: each group version's document carries the
// definitions of its kinds and every definition they refer to.

// builtinDefs are the definitions ready to publish: as v2 (references under
// #/definitions/) and v3 (under #/components/schemas/, a reference with a
// description wrapped in allOf as kube-openapi writes it).
type builtinDefs struct {
	v2, v3 map[string]json.RawMessage
	// refs are the definitions each one refers to.
	refs map[string][]string
	// byGVK names the definition of each kind.
	byGVK map[api.GroupVersionKind]string
	// byGV lists the definitions of the kinds of a group version (by gvPath).
	byGV map[string][]string
}

// builtinDefinitions returns the definitions, loaded on first use; nil when
// there are none or they cannot be read (logged).
func (s *Server) builtinDefinitions() *builtinDefs {
	s.builtinOnce.Do(func() {
		if s.opts.OpenAPIDefinitions == nil {
			return
		}
		raw, err := s.opts.OpenAPIDefinitions()
		if err != nil {
			s.opts.Logger.Error(err, "loading the built-in OpenAPI definitions; publishing none")
			return
		}
		d, err := newBuiltinDefs(raw)
		if err != nil {
			s.opts.Logger.Error(err, "loading the built-in OpenAPI definitions; publishing none")
			return
		}
		s.builtinOpenAPI = d
	})
	return s.builtinOpenAPI
}

func newBuiltinDefs(raw map[string]json.RawMessage) (*builtinDefs, error) {
	d := &builtinDefs{v2: map[string]json.RawMessage{}, v3: map[string]json.RawMessage{},
		refs: map[string][]string{}, byGVK: map[api.GroupVersionKind]string{}, byGV: map[string][]string{}}
	for name, b := range raw {
		var def map[string]any
		if err := json.Unmarshal(b, &def); err != nil {
			return nil, err
		}
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			group, _ := m["group"].(string)
			version, _ := m["version"].(string)
			kind, _ := m["kind"].(string)
			gv := api.GroupVersion{Group: group, Version: version}
			d.byGVK[gv.WithKind(kind)] = name
			d.byGV[gvPath(gv)] = append(d.byGV[gvPath(gv)], name)
		}
		refs := map[string]bool{}
		v2 := rewriteRefs(def, refs, false)
		v3 := rewriteRefs(def, nil, true)
		var err error
		if d.v2[name], err = json.Marshal(v2); err != nil {
			return nil, err
		}
		if d.v3[name], err = json.Marshal(v3); err != nil {
			return nil, err
		}
		d.refs[name] = slices.Sorted(maps.Keys(refs))
	}
	for gv, names := range d.byGV {
		slices.Sort(names)
		d.byGV[gv] = slices.Compact(names)
	}
	return d, nil
}

// rewriteRefs returns a copy of s with its bare references made v2 or v3
// ones, recording the names referred to in refs (when not nil).
func rewriteRefs(s any, refs map[string]bool, v3 bool) any {
	switch s := s.(type) {
	case map[string]any:
		out := make(map[string]any, len(s))
		for k, v := range s {
			out[k] = rewriteRefs(v, refs, v3)
		}
		if _, ok := s["oneOf"]; ok && s["type"] != nil {
			// A value of one of several types: "type" for v2,
			// "oneOf" for v3.
			if v3 {
				delete(out, "type")
			} else {
				delete(out, "oneOf")
			}
		}
		ref, ok := s["$ref"].(string)
		if !ok || strings.HasPrefix(ref, "#") {
			return out
		}
		if refs != nil {
			refs[ref] = true
		}
		if !v3 {
			out["$ref"] = "#/definitions/" + ref
			return out
		}
		if len(s) == 1 {
			out["$ref"] = "#/components/schemas/" + ref
			return out
		}
		// OpenAPI v3 ignores a reference's siblings: allOf keeps them.
		delete(out, "$ref")
		out["allOf"] = []any{map[string]any{"$ref": "#/components/schemas/" + ref}}
		return out
	case []any:
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = rewriteRefs(v, refs, v3)
		}
		return out
	}
	return s
}

// closure adds to into the definitions named by roots and every one they
// refer to, as v2 or v3.
func (d *builtinDefs) closure(into map[string]any, roots []string, v3 bool) {
	src := d.v2
	if v3 {
		src = d.v3
	}
	seen := map[string]bool{}
	for len(roots) > 0 {
		n := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		if seen[n] {
			continue
		}
		seen[n] = true
		if b, ok := src[n]; ok {
			into[n] = b
		}
		roots = append(roots, d.refs[n]...)
	}
}

// kindDef is the definition name of res's kind, "" if there is none.
func (d *builtinDefs) kindDef(res *registry.Resource) string {
	if d == nil || res.Schema != nil {
		return ""
	}
	return d.byGVK[res.GroupVersion.WithKind(res.Kind)]
}

// addDefinitions adds the definitions of the kinds of list (the kinds
// without a schema, their list kinds, and what they refer to) to defs;
// when list has a custom resource, ObjectMeta's generated definition
// replaces the short one kindSchema's references get.
func (d *builtinDefs) addDefinitions(defs map[string]any, list []*registry.Resource, v3 bool) {
	if d == nil {
		return
	}
	var roots []string
	seenGV := map[string]bool{}
	for _, res := range list {
		if res.Schema != nil {
			if _, ok := d.v2[objectMetaRef]; ok {
				roots = append(roots, objectMetaRef)
			}
			continue
		}
		if n := d.kindDef(res); n != "" {
			roots = append(roots, n)
		}
		if p := gvPath(res.GroupVersion); !seenGV[p] {
			seenGV[p] = true
			roots = append(roots, d.byGV[p]...)
		}
	}
	d.closure(defs, roots, v3)
}
