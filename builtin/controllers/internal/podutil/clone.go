package podutil

import (
	"encoding/json"
	"fmt"
)

// Clone returns a deep copy of v through JSON, for objects read from a cache
// (which must not be modified). The built-in types have no generated
// DeepCopy; their JSON form is complete by construction.
func Clone[T any](v *T) (*T, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("clone %T: %w", v, err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("clone %T: %w", v, err)
	}
	return out, nil
}
