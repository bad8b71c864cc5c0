// Package resource stands in for k8s.io/apimachinery's resource package.
package resource

// Quantity is a fixed-point number.
type Quantity struct {
	s string
}

// MarshalJSON writes the string form.
func (q Quantity) MarshalJSON() ([]byte, error) { return []byte(`"` + q.s + `"`), nil }
