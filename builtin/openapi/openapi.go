package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

//go:embed definitions.json
var definitions []byte

// Definitions returns the definitions by name, as JSON; a reference is the
// bare name of the definition it refers to ({"$ref": "io.k8s.api.core.v1.PodSpec"}).
func Definitions() (map[string]json.RawMessage, error) {
	var out map[string]json.RawMessage
	if err := json.Unmarshal(definitions, &out); err != nil {
		return nil, fmt.Errorf("decoding the built-in OpenAPI definitions: %w", err)
	}
	return out, nil
}
