// Package intstr stands in for k8s.io/apimachinery's intstr package.
package intstr

// IntOrString is an int or a string.
type IntOrString struct {
	IntVal int32
	StrVal string
}

// MarshalJSON writes either.
func (v IntOrString) MarshalJSON() ([]byte, error) { return []byte(v.StrVal), nil }
