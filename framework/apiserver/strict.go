package apiserver

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
)

// duplicateFields returns the strict decoding messages for keys repeated in
// one object of a request body, as Kubernetes words them: for JSON one
// `duplicate field "spec.replicas"` per repeat; for YAML the strict YAML
// converter's error (`... line 9: key "foo" already set in map`).
func duplicateFields(body []byte, isJSON bool) []string {
	if isJSON {
		paths := api.DuplicateFields(body)
		if len(paths) == 0 {
			return nil
		}
		out := make([]string, len(paths))
		for i, p := range paths {
			out[i] = fmt.Sprintf("duplicate field %q", p)
		}
		return out
	}
	if _, err := yaml.YAMLToJSONStrict(body); err != nil {
		return []string{err.Error()}
	}
	return nil
}
