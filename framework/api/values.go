package api

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// IntOrString holds either an integer or a string, like `maxSurge: 25%`.
type IntOrString struct {
	Type   IntOrStringType `protobuf:"varint,1,opt,name=type,casttype=Type"`
	IntVal int32           `protobuf:"varint,2,opt,name=intVal"`
	StrVal string          `protobuf:"bytes,3,opt,name=strVal"`
}

// IntOrStringType says which member of an IntOrString is set.
type IntOrStringType int64

// The two kinds of IntOrString.
const (
	Int    IntOrStringType = 0
	String IntOrStringType = 1
)

// FromInt returns an integer IntOrString.
func FromInt(v int) IntOrString { return IntOrString{Type: Int, IntVal: int32(v)} }

// FromString returns a string IntOrString.
func FromString(v string) IntOrString { return IntOrString{Type: String, StrVal: v} }

// MarshalJSON renders a JSON number or string.
func (v IntOrString) MarshalJSON() ([]byte, error) {
	if v.Type == String {
		return json.Marshal(v.StrVal)
	}
	return json.Marshal(v.IntVal)
}

// UnmarshalJSON accepts a JSON number or string.
func (v *IntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		v.Type = String
		v.IntVal = 0
		return json.Unmarshal(b, &v.StrVal)
	}
	v.Type = Int
	v.StrVal = ""
	return json.Unmarshal(b, &v.IntVal)
}

// String renders the value as text.
func (v IntOrString) String() string {
	if v.Type == String {
		return v.StrVal
	}
	return strconv.Itoa(int(v.IntVal))
}

// Quantity is a resource amount in Kubernetes notation ("100m", "128Mi", "1.5").
// It keeps the text it was given; Parse computes its value.
type Quantity struct {
	S string `protobuf:"bytes,1,opt,name=string"`
}

// MustParseQuantity returns a Quantity for s, panicking on a malformed value; for
// constants in code and tests.
func MustParseQuantity(s string) Quantity {
	q := Quantity{S: s}
	if _, err := q.MilliValue(); err != nil {
		panic(err)
	}
	return q
}

// String returns the text form.
func (q Quantity) String() string { return q.S }

// IsZero reports whether the quantity is empty or zero.
func (q Quantity) IsZero() bool {
	m, err := q.MilliValue()
	return q.S == "" || (err == nil && m == 0)
}

// MarshalJSON renders the text form.
func (q Quantity) MarshalJSON() ([]byte, error) { return json.Marshal(q.S) }

// UnmarshalJSON accepts a string or a number and checks the syntax.
func (q *Quantity) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
	} else {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		s = n.String()
	}
	nq := Quantity{S: s}
	if _, err := nq.MilliValue(); err != nil {
		return err
	}
	*q = nq
	return nil
}

var quantitySuffixes = map[string]float64{
	"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60,
}

// Float64 returns the quantity's value in base units.
func (q Quantity) Float64() (float64, error) {
	s := q.S
	if s == "" {
		return 0, nil
	}
	i := len(s)
	for i > 0 && !(s[i-1] >= '0' && s[i-1] <= '9' || s[i-1] == '.') {
		i--
	}
	num, suffix := s[:i], s[i:]
	var exp float64 = 1
	if f, ok := quantitySuffixes[suffix]; ok {
		exp = f
	} else if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		e, err := strconv.Atoi(suffix[1:])
		if err != nil {
			return 0, fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
		}
		f, err := strconv.ParseFloat("1e"+strconv.Itoa(e), 64)
		if err != nil {
			return 0, err
		}
		exp = f
	} else {
		return 0, fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	}
	if num == "" || num == "+" || num == "-" {
		return 0, fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	}
	return f * exp, nil
}

// MilliValue returns the value in thousandths, rounded up, as Kubernetes does for CPU.
func (q Quantity) MilliValue() (int64, error) {
	f, err := q.Float64()
	if err != nil {
		return 0, err
	}
	m := f * 1000
	im := int64(m)
	if float64(im) < m {
		im++
	}
	return im, nil
}

// Value returns the value in base units, rounded up.
func (q Quantity) Value() (int64, error) {
	f, err := q.Float64()
	if err != nil {
		return 0, err
	}
	iv := int64(f)
	if float64(iv) < f {
		iv++
	}
	return iv, nil
}

// Condition is the standard status condition (metav1.Condition).
type Condition struct {
	Type               string `json:"type" protobuf:"bytes,1,opt,name=type"`
	Status             string `json:"status" protobuf:"bytes,2,opt,name=status"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty" protobuf:"varint,3,opt,name=observedGeneration"`
	LastTransitionTime Time   `json:"lastTransitionTime" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	Reason             string `json:"reason" protobuf:"bytes,5,opt,name=reason"`
	Message            string `json:"message" protobuf:"bytes,6,opt,name=message"`
}

// Condition statuses.
const (
	ConditionTrue    = "True"
	ConditionFalse   = "False"
	ConditionUnknown = "Unknown"
)

// LabelSelector selects objects by labels: every matchLabels pair and every
// matchExpressions requirement must hold. An empty selector matches everything;
// a nil one matches nothing.
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty" protobuf:"bytes,1,rep,name=matchLabels" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty" protobuf:"bytes,2,rep,name=matchExpressions"`
}

// LabelSelectorRequirement is one matchExpressions entry.
type LabelSelectorRequirement struct {
	Key      string   `json:"key" patchStrategy:"merge" patchMergeKey:"key" protobuf:"bytes,1,opt,name=key"`
	Operator string   `json:"operator" protobuf:"bytes,2,opt,name=operator,casttype=LabelSelectorOperator"`
	Values   []string `json:"values,omitempty" protobuf:"bytes,3,rep,name=values"`
}

// Label selector operators.
const (
	LabelSelectorOpIn           = "In"
	LabelSelectorOpNotIn        = "NotIn"
	LabelSelectorOpExists       = "Exists"
	LabelSelectorOpDoesNotExist = "DoesNotExist"
)

// RawExtension holds an embedded object as raw JSON.
type RawExtension struct {
	Raw []byte `json:"-" protobuf:"bytes,1,opt,name=raw"`
}

// MarshalJSON emits the raw JSON.
func (r RawExtension) MarshalJSON() ([]byte, error) {
	if len(r.Raw) == 0 {
		return []byte("null"), nil
	}
	return r.Raw, nil
}

// UnmarshalJSON keeps the raw JSON.
func (r *RawExtension) UnmarshalJSON(b []byte) error {
	if string(b) != "null" {
		r.Raw = append(r.Raw[:0], b...)
	}
	return nil
}
