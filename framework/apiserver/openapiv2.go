package apiserver

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// OpenAPI v2, only as much as kubectl up to 1.27 needs. Those versions ask
// /openapi/v2 (protobuf, a gnostic openapi_v2.Document) whether the server
// supports the fieldValidation query parameter for a kind before `create -f`,
// `apply`, `replace` and `edit`; a 404 there is fatal under --validate=strict.
// The document lists, for every resource, the item path with a PATCH operation
// carrying x-kubernetes-group-version-kind and a fieldValidation query parameter
// (the same facts as the v3 stubs). The JSON document also has the
// definitions of the kinds: those with a schema (custom resources:
// openapiv2defs.go), as kube-apiserver publishes them, and the built-in ones
// (openapibuiltin.go); the protobuf one, which kubectl reads, has the same
// (openapiv2proto.go). kubectl leaves validation to the server
// (fieldValidation). Both are built once per registry version and carry an
// ETag.

// The protobuf document is sent as application/octet-stream: the media type
// clients ask for ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
// is not a valid Content-Type, and client-go rejects a response carrying it.
const mediaOctetStream = "application/octet-stream"

func (s *Server) serveOpenAPIV2(w http.ResponseWriter, r *http.Request) {
	if strings.Trim(strings.TrimPrefix(r.URL.Path, "/openapi/v2"), "/") != "" {
		writeError(w, notFoundPath(r.URL.Path))
		return
	}
	c := s.openAPIV2Docs()
	b, etag, ctype := c.json, c.jsonETag, mediaJSON
	if strings.Contains(r.Header.Get("Accept"), "protobuf") {
		b, etag, ctype = c.proto, c.protoETag, mediaOctetStream
	}
	w.Header().Set("Etag", etag)
	w.Header().Set("Vary", "Accept")
	if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// openAPIV2Cache holds the /openapi/v2 documents of one registry version.
type openAPIV2Cache struct {
	ver                 int64
	json, proto         []byte
	jsonETag, protoETag string
}

// openAPIV2Docs returns the /openapi/v2 documents, built again only when
// the registry changed.
func (s *Server) openAPIV2Docs() *openAPIV2Cache {
	defs := s.builtinDefinitions()
	s.discoveryMu.Lock()
	defer s.discoveryMu.Unlock()
	ver := s.opts.Registry.Version()
	if c := s.openAPIV2; c != nil && c.ver == ver {
		return c
	}
	list := s.opts.Registry.All()
	j, _ := json.Marshal(openAPIV2JSON(list, s.opts.KubernetesVersion, defs))
	// The protobuf document's definitions are the JSON one's, decoded
	// (the built-in ones are raw JSON until then).
	var decoded struct {
		Definitions map[string]any `json:"definitions"`
	}
	_ = json.Unmarshal(j, &decoded)
	p := openAPIV2Proto(openAPIV2Items(list, defs), s.opts.KubernetesVersion, decoded.Definitions)
	etag := func(b []byte) string {
		sum := sha256.Sum256(b)
		return `"` + strings.ToUpper(hex.EncodeToString(sum[:16])) + `"`
	}
	s.openAPIV2 = &openAPIV2Cache{ver: ver, json: j, proto: p, jsonETag: etag(j), protoETag: etag(p)}
	return s.openAPIV2
}

// openAPIV2Item is one resource's item path, group/version/kind and the
// name of its definition (if it has one).
type openAPIV2Item struct {
	path, group, version, kind, def string
}

func openAPIV2Items(list []*registry.Resource, builtin *builtinDefs) []openAPIV2Item {
	var items []openAPIV2Item
	for _, res := range list {
		p := "/" + gvPath(res.GroupVersion) + "/"
		if res.Namespaced {
			p += "namespaces/{namespace}/"
		}
		p += res.Resource + "/{name}"
		def := builtin.kindDef(res)
		if res.Schema != nil {
			def = schemaName(res)
		}
		items = append(items, openAPIV2Item{path: p, group: res.GroupVersion.Group, version: res.GroupVersion.Version, kind: res.Kind, def: def})
	}
	slices.SortFunc(items, func(a, b openAPIV2Item) int { return strings.Compare(a.path, b.path) })
	return slices.CompactFunc(items, func(a, b openAPIV2Item) bool { return a.path == b.path })
}

func openAPIV2JSON(list []*registry.Resource, version string, builtin *builtinDefs) map[string]any {
	paths := map[string]any{}
	for _, it := range openAPIV2Items(list, builtin) {
		ok := map[string]any{"description": "OK"}
		if it.def != "" {
			ok["schema"] = map[string]any{"$ref": "#/definitions/" + it.def}
		}
		paths[it.path] = map[string]any{"patch": map[string]any{
			"x-kubernetes-group-version-kind": map[string]string{"group": it.group, "version": it.version, "kind": it.kind},
			"parameters":                      []any{map[string]any{"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": true}},
			"responses":                       map[string]any{"200": ok},
		}}
	}
	doc := map[string]any{"swagger": "2.0", "info": map[string]any{"title": "Kubernetes", "version": version}, "paths": paths}
	defs := openAPIV2Definitions(list)
	builtin.addDefinitions(defs, list, false)
	if len(defs) > 0 {
		doc["definitions"] = defs
	}
	return doc
}

// openAPIV2Proto encodes the document as gnostic's openapi.v2.Document (field
// numbers from gnostic's OpenAPIv2.proto).
func openAPIV2Proto(items []openAPIV2Item, version string, defs map[string]any) []byte {
	var paths []byte
	for _, it := range items {
		gvk := fmt.Sprintf("group: %q\nkind: %q\nversion: %q\n", it.group, it.kind, it.version)
		ext := pbString(nil, 2, gvk)                                                     // Any{yaml=2}
		namedExt := pbBytes(pbString(nil, 1, "x-kubernetes-group-version-kind"), 2, ext) // NamedAny{name=1,value=2}
		query := pbString(pbString(pbString(nil, 2, "query"), 4, "fieldValidation"), 6, "string")
		param := pbBytes(nil, 1, pbBytes(nil, 2, pbBytes(nil, 3, query))) // ParametersItem{parameter=1{non_body=2{query=3}}}
		resp := pbString(nil, 1, "OK")
		if it.def != "" {
			resp = pbBytes(resp, 2, pbBytes(nil, 1, pbString(nil, 1, "#/definitions/"+it.def))) // Response.schema{schema=1{_ref=1}}
		}
		response := pbBytes(pbString(nil, 1, "200"), 2, pbBytes(nil, 1, resp))
		op := pbBytes(nil, 8, param)                                           // Operation.parameters
		op = pbBytes(op, 9, pbBytes(nil, 1, response))                         // Operation.responses{response_code=1}
		op = pbBytes(op, 13, namedExt)                                         // Operation.vendor_extension
		item := pbBytes(nil, 8, op)                                            // PathItem.patch
		paths = pbBytes(paths, 2, pbBytes(pbString(nil, 1, it.path), 2, item)) // Paths.path{NamedPathItem}
	}
	doc := pbString(nil, 1, "2.0")
	doc = pbBytes(doc, 2, pbString(pbString(nil, 1, "Kubernetes"), 2, version))
	doc = pbBytes(doc, 8, paths)
	if len(defs) > 0 {
		doc = pbBytes(doc, 9, pbDefinitions(defs))
	}
	return doc
}

// pbBytes appends a length-delimited field.
func pbBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3|2)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// pbString appends a string field (omitted when empty, as proto3 does).
func pbString(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	return pbBytes(b, field, []byte(v))
}
