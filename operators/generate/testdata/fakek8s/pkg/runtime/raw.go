// Package runtime stands in for k8s.io/apimachinery's runtime package.
package runtime

// RawExtension is raw JSON.
type RawExtension struct {
	Raw []byte `json:"-"`
}

// MarshalJSON writes Raw.
func (r RawExtension) MarshalJSON() ([]byte, error) { return r.Raw, nil }
