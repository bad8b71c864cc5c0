package apiserver

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
)

// The definitions of the protobuf /openapi/v2 document: each JSON schema of
// the JSON document as gnostic's openapi.v2.Schema (field numbers from
// gnostic's OpenAPIv2.proto). kubectl explain (v2 fallback), the e2e
// framework's wait for a CRD's published schema, and clients that compute
// strategic merge patches from OpenAPI read them there.

// pbDefinitions encodes defs (name → JSON schema) as openapi.v2.Definitions.
func pbDefinitions(defs map[string]any) []byte {
	var b []byte
	for _, name := range slices.Sorted(mapKeys(defs)) {
		s, _ := defs[name].(map[string]any)
		b = pbBytes(b, 1, pbBytes(pbString(nil, 1, name), 2, pbSchema(s))) // NamedSchema{name=1,value=2}
	}
	return b
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// pbSchema encodes a JSON schema as openapi.v2.Schema.
func pbSchema(s map[string]any) []byte {
	var b []byte
	str := func(field int, key string) {
		if v, ok := s[key].(string); ok {
			b = pbString(b, field, v)
		}
	}
	num := func(field int, key string) {
		if v, ok := s[key].(float64); ok {
			b = binary.AppendUvarint(b, uint64(field)<<3|1)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	integer := func(field int, key string) {
		if v, ok := s[key].(float64); ok {
			b = pbVarint(b, field, uint64(int64(v)))
		}
	}
	boolean := func(field int, key string) {
		if v, ok := s[key].(bool); ok && v {
			b = pbVarint(b, field, 1)
		}
	}
	str(1, "$ref")
	str(2, "format")
	str(3, "title")
	str(4, "description")
	if v, ok := s["default"]; ok {
		b = pbBytes(b, 5, pbAny(v))
	}
	num(6, "multipleOf")
	num(7, "maximum")
	boolean(8, "exclusiveMaximum")
	num(9, "minimum")
	boolean(10, "exclusiveMinimum")
	integer(11, "maxLength")
	integer(12, "minLength")
	str(13, "pattern")
	integer(14, "maxItems")
	integer(15, "minItems")
	boolean(16, "uniqueItems")
	integer(17, "maxProperties")
	integer(18, "minProperties")
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if r, ok := r.(string); ok {
				b = pbBytes(b, 19, []byte(r))
			}
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		for _, e := range enum {
			b = pbBytes(b, 20, pbAny(e))
		}
	}
	switch ap := s["additionalProperties"].(type) {
	case map[string]any:
		b = pbBytes(b, 21, pbBytes(nil, 1, pbSchema(ap)))
	case bool:
		v := uint64(0)
		if ap {
			v = 1
		}
		b = pbBytes(b, 21, pbVarint(nil, 2, v))
	}
	switch t := s["type"].(type) {
	case string:
		b = pbBytes(b, 22, pbBytes(nil, 1, []byte(t)))
	case []any:
		var ti []byte
		for _, v := range t {
			if v, ok := v.(string); ok {
				ti = pbBytes(ti, 1, []byte(v))
			}
		}
		b = pbBytes(b, 22, ti)
	}
	switch items := s["items"].(type) {
	case map[string]any:
		b = pbBytes(b, 23, pbBytes(nil, 1, pbSchema(items)))
	case []any:
		var ii []byte
		for _, it := range items {
			if it, ok := it.(map[string]any); ok {
				ii = pbBytes(ii, 1, pbSchema(it))
			}
		}
		b = pbBytes(b, 23, ii)
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, a := range all {
			if a, ok := a.(map[string]any); ok {
				b = pbBytes(b, 24, pbSchema(a))
			}
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		var p []byte
		for _, name := range slices.Sorted(mapKeys(props)) {
			ps, _ := props[name].(map[string]any)
			p = pbBytes(p, 1, pbBytes(pbString(nil, 1, name), 2, pbSchema(ps)))
		}
		b = pbBytes(b, 25, p)
	}
	boolean(27, "readOnly")
	if v, ok := s["example"]; ok {
		b = pbBytes(b, 30, pbAny(v))
	}
	for _, k := range slices.Sorted(mapKeys(s)) {
		if len(k) > 2 && k[:2] == "x-" {
			b = pbBytes(b, 31, pbBytes(pbString(nil, 1, k), 2, pbAny(s[k]))) // NamedAny
		}
	}
	return b
}

// pbAny encodes a JSON value as openapi.v2.Any: its YAML (JSON is YAML).
func pbAny(v any) []byte {
	j, _ := json.Marshal(v)
	return pbBytes(nil, 2, j)
}

// pbVarint appends a varint field.
func pbVarint(b []byte, field int, v uint64) []byte {
	b = binary.AppendUvarint(b, uint64(field)<<3)
	return binary.AppendUvarint(b, v)
}
