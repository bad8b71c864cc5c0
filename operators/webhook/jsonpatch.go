package webhook

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// PatchOperation is one RFC 6902 JSON patch operation.
type PatchOperation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// MarshalJSON writes value for add and replace even when it is null.
func (p PatchOperation) MarshalJSON() ([]byte, error) {
	if p.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{p.Op, p.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{p.Op, p.Path, p.Value})
}

// CreateJSONPatch returns the JSON patch that turns the JSON document from
// into to: objects are compared key by key (sorted, so the patch is
// deterministic), arrays of the same length element by element, and anything
// else is replaced whole.
func CreateJSONPatch(from, to []byte) ([]PatchOperation, error) {
	var a, b any
	if err := json.Unmarshal(from, &a); err != nil {
		return nil, fmt.Errorf("decode original: %w", err)
	}
	if err := json.Unmarshal(to, &b); err != nil {
		return nil, fmt.Errorf("decode modified: %w", err)
	}
	return diff("", a, b, nil), nil
}

func diff(path string, a, b any, ops []PatchOperation) []PatchOperation {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		for _, k := range slices.Sorted(maps.Keys(av)) {
			if _, ok := bv[k]; !ok {
				ops = append(ops, PatchOperation{Op: "remove", Path: path + "/" + escape(k)})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(bv)) {
			p := path + "/" + escape(k)
			if old, ok := av[k]; ok {
				ops = diff(p, old, bv[k], ops)
			} else {
				ops = append(ops, PatchOperation{Op: "add", Path: p, Value: bv[k]})
			}
		}
		return ops
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			ops = diff(fmt.Sprintf("%s/%d", path, i), av[i], bv[i], ops)
		}
		return ops
	}
	if reflect.DeepEqual(a, b) {
		return ops
	}
	return append(ops, PatchOperation{Op: "replace", Path: path, Value: b})
}

// escape encodes a key as an RFC 6901 reference token.
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
