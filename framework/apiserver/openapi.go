package apiserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// OpenAPI v3: an index of every served group version and one document per group
// version. Each item path carries a PATCH operation with the kind's
// x-kubernetes-group-version-kind and the fieldValidation parameter, which is what
// kubectl checks before trusting the server to validate (WIRE.md §3), and the
// kind's schema as its response. Schemas come from Resource.Schema where a
// resource has one (custom resources), else from Options.OpenAPIDefinitions
// (openapibuiltin.go).

func gvPath(gv api.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

func (s *Server) openAPIDocs() (map[string][]byte, map[string]string) {
	s.discoveryMu.Lock()
	defer s.discoveryMu.Unlock()
	ver := s.opts.Registry.Version()
	if s.discoveryCache != nil && s.discoveryVer == ver {
		return s.discoveryCache, s.openAPIHashes
	}
	defs := s.builtinDefinitions()
	byGV := map[string][]*registry.Resource{}
	for _, res := range s.opts.Registry.All() {
		p := gvPath(res.GroupVersion)
		byGV[p] = append(byGV[p], res)
	}
	docs := map[string][]byte{}
	hashes := map[string]string{}
	for p, list := range byGV {
		b, _ := json.Marshal(openAPIDoc(p, list, s.opts.KubernetesVersion, defs))
		sum := sha256.Sum256(b)
		docs[p] = b
		hashes[p] = strings.ToUpper(hex.EncodeToString(sum[:16]))
	}
	s.discoveryCache, s.openAPIHashes, s.discoveryVer = docs, hashes, ver
	return docs, hashes
}

func openAPIDoc(prefix string, list []*registry.Resource, version string, defs *builtinDefs) map[string]any {
	paths := map[string]any{}
	schemas := map[string]any{}
	for _, res := range list {
		item := "/" + prefix + "/"
		if res.Namespaced {
			item += "namespaces/{namespace}/"
		}
		item += res.Resource + "/{name}"
		gvk := map[string]string{"group": res.GroupVersion.Group, "version": res.GroupVersion.Version, "kind": res.Kind}
		params := []any{
			map[string]any{"name": "dryRun", "in": "query", "schema": map[string]any{"type": "string"}},
			map[string]any{"name": "fieldManager", "in": "query", "schema": map[string]any{"type": "string"}},
			map[string]any{"name": "fieldValidation", "in": "query", "schema": map[string]any{"type": "string"}},
		}
		ok := map[string]any{"description": "OK"}
		if n := defs.kindDef(res); n != "" {
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + n}}}
		} else if res.Schema != nil {
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/" + schemaName(res)}}}
		}
		op := func(verb string) map[string]any {
			return map[string]any{
				"x-kubernetes-group-version-kind": gvk,
				"x-kubernetes-action":             verb,
				"parameters":                      params,
				"responses":                       map[string]any{"200": ok},
			}
		}
		paths[item] = map[string]any{"patch": op("patch"), "put": op("put")}
		coll := strings.TrimSuffix(item, "/{name}")
		paths[coll] = map[string]any{"post": op("post")}
		if res.Schema != nil {
			schemas[schemaName(res)] = kindSchema(res.Schema, []any{map[string]any{"group": gvk["group"], "version": gvk["version"], "kind": gvk["kind"]}}, false)
			schemas[objectMetaRef] = objectMetaDefinition()
		}
	}
	defs.addDefinitions(schemas, list, true)
	return map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]any{"title": "Kubernetes", "version": version},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
}

func schemaName(res *registry.Resource) string {
	g := res.GroupVersion.Group
	if g == "" {
		g = "core"
	}
	parts := strings.Split(g, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + res.GroupVersion.Version + "." + res.Kind
}

func (s *Server) serveOpenAPIV3(w http.ResponseWriter, r *http.Request) {
	docs, hashes := s.openAPIDocs()
	rest := strings.Trim(strings.TrimPrefix(r.URL.Path, "/openapi/v3"), "/")
	if rest == "" {
		paths := map[string]any{}
		for p := range docs {
			paths[p] = map[string]string{"serverRelativeURL": "/openapi/v3/" + p + "?hash=" + hashes[p]}
		}
		writeJSON(w, http.StatusOK, map[string]any{"paths": paths})
		return
	}
	b, ok := docs[rest]
	if !ok {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	if r.URL.Query().Get("hash") != "" {
		w.Header().Set("Cache-Control", "public, immutable")
	}
	w.Header().Set("Etag", `"`+hashes[rest]+`"`)
	writeRawJSON(w, http.StatusOK, b)
}
