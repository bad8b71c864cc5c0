package labels

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// Operator relates a requirement's key to its values.
type Operator string

// The operators, with Kubernetes' selection.Operator values.
const (
	Equals       Operator = "="
	DoubleEquals Operator = "=="
	NotEquals    Operator = "!="
	In           Operator = "in"
	NotIn        Operator = "notin"
	Exists       Operator = "exists"
	DoesNotExist Operator = "!"
	GreaterThan  Operator = "gt"
	LessThan     Operator = "lt"
)

// Selector selects label sets.
type Selector interface {
	// Matches reports whether the labels satisfy every requirement.
	Matches(labels map[string]string) bool
	// Empty reports whether the selector selects everything.
	Empty() bool
	// String renders the selector in the syntax Parse accepts.
	String() string
	// Requirements returns the requirements, sorted by key; nil for Nothing.
	Requirements() []Requirement
	// RequiresExactMatch reports whether the first requirement on key demands
	// a single value (=, == or in with one value), and which.
	RequiresExactMatch(key string) (value string, found bool)
}

// Requirement is one condition of a selector. The zero value is invalid; build
// one with NewRequirement.
type Requirement struct {
	key      string
	operator Operator
	values   []string // sorted, deduplicated for in/notin
}

// NewRequirement validates and returns a requirement: the key must be a
// qualified name, each value a label value; in and notin need at least one
// value, =, ==, != exactly one, exists and ! none, gt and lt one integer.
// Errors use the field paths "key" and "values" like Kubernetes'.
func NewRequirement(key string, op Operator, values []string) (Requirement, error) {
	return newRequirement(key, op, values, nil)
}

func newRequirement(key string, op Operator, values []string, path *field.Path) (Requirement, error) {
	var errs field.ErrorList
	if msgs := validation.IsQualifiedName(key); len(msgs) != 0 {
		errs = append(errs, field.Invalid(path.Child("key"), key, strings.Join(msgs, "; ")))
	}
	valuePath := path.Child("values")
	switch op {
	case In, NotIn:
		if len(values) == 0 {
			errs = append(errs, field.Invalid(valuePath, values, "for 'in', 'notin' operators, values set can't be empty"))
		}
	case Equals, DoubleEquals, NotEquals:
		if len(values) != 1 {
			errs = append(errs, field.Invalid(valuePath, values, "exact-match compatibility requires one single value"))
		}
	case Exists, DoesNotExist:
		if len(values) != 0 {
			errs = append(errs, field.Invalid(valuePath, values, "values set must be empty for exists and does not exist"))
		}
	case GreaterThan, LessThan:
		if len(values) != 1 {
			errs = append(errs, field.Invalid(valuePath, values, "for 'Gt', 'Lt' operators, exactly one value is required"))
		}
		for i, v := range values {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				errs = append(errs, field.Invalid(valuePath.Index(i), v, "for 'Gt', 'Lt' operators, the value must be an integer"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("operator"), op,
			[]string{"in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!"}))
	}
	for i, v := range values {
		if msgs := validation.IsValidLabelValue(v); len(msgs) != 0 {
			errs = append(errs, field.Invalid(valuePath.Index(i).Key(key), v, strings.Join(msgs, "; ")))
		}
	}
	if err := errs.ToError(); err != nil {
		return Requirement{}, err
	}
	vals := slices.Clone(values)
	if op == In || op == NotIn {
		slices.Sort(vals)
		vals = slices.Compact(vals)
	}
	return Requirement{key: key, operator: op, values: vals}, nil
}

// Key returns the label key.
func (r Requirement) Key() string { return r.key }

// Operator returns the operator.
func (r Requirement) Operator() Operator { return r.operator }

// Values returns a copy of the values (sorted for in and notin).
func (r Requirement) Values() []string { return slices.Clone(r.values) }

// Equal reports whether two requirements are identical.
func (r Requirement) Equal(o Requirement) bool {
	return r.key == o.key && r.operator == o.operator && slices.Equal(r.values, o.values)
}

// Matches reports whether labels satisfy the requirement.
func (r Requirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.key]
	switch r.operator {
	case In, Equals, DoubleEquals:
		return ok && slices.Contains(r.values, v)
	case NotIn, NotEquals:
		return !ok || !slices.Contains(r.values, v)
	case Exists:
		return ok
	case DoesNotExist:
		return !ok
	case GreaterThan, LessThan:
		if !ok || len(r.values) != 1 {
			return false
		}
		have, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, err := strconv.ParseInt(r.values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.operator == GreaterThan {
			return have > want
		}
		return have < want
	}
	return false
}

// String renders the requirement: "k=v", "k in (a,b)", "!k", "k>5", ...
func (r Requirement) String() string {
	var b strings.Builder
	if r.operator == DoesNotExist {
		b.WriteByte('!')
	}
	b.WriteString(r.key)
	switch r.operator {
	case Exists, DoesNotExist:
		return b.String()
	case In, NotIn:
		b.WriteString(" " + string(r.operator) + " (" + strings.Join(r.values, ",") + ")")
		return b.String()
	case GreaterThan:
		b.WriteByte('>')
	case LessThan:
		b.WriteByte('<')
	default:
		b.WriteString(string(r.operator))
	}
	b.WriteString(strings.Join(r.values, ","))
	return b.String()
}

// compare orders requirements by key, then by text.
func compare(a, b Requirement) int {
	return cmp.Or(strings.Compare(a.key, b.key), strings.Compare(a.String(), b.String()))
}

// selector is a sorted AND of requirements; empty selects everything.
type selector []Requirement

func newSelector(reqs []Requirement) selector {
	s := selector(slices.Clone(reqs))
	slices.SortFunc(s, compare)
	return s
}

func (s selector) Matches(labels map[string]string) bool {
	for _, r := range s {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

func (s selector) Empty() bool { return len(s) == 0 }

func (s selector) String() string {
	parts := make([]string, len(s))
	for i, r := range s {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

func (s selector) Requirements() []Requirement { return slices.Clone([]Requirement(s)) }

func (s selector) RequiresExactMatch(key string) (string, bool) {
	for _, r := range s {
		if r.key != key {
			continue
		}
		switch r.operator {
		case Equals, DoubleEquals, In:
			if len(r.values) == 1 {
				return r.values[0], true
			}
		}
		return "", false
	}
	return "", false
}

// nothing selects no label set.
type nothing struct{}

func (nothing) Matches(map[string]string) bool           { return false }
func (nothing) Empty() bool                              { return false }
func (nothing) String() string                           { return "" }
func (nothing) Requirements() []Requirement              { return nil }
func (nothing) RequiresExactMatch(string) (string, bool) { return "", false }

// Everything returns the selector that matches every label set (String "").
func Everything() Selector { return selector(nil) }

// Nothing returns the selector that matches no label set. Its String is "",
// which Parse reads back as Everything: Nothing has no textual form.
func Nothing() Selector { return nothing{} }

// NewSelector returns the AND of the requirements.
func NewSelector(reqs ...Requirement) Selector { return newSelector(reqs) }

// SelectorFromSet returns the selector requiring every key=value of set; nil or
// empty selects everything. The set is not validated: a selector from an
// invalid set matches as expected but its String may not parse.
func SelectorFromSet(set map[string]string) Selector {
	s := make(selector, 0, len(set))
	for _, k := range slices.Sorted(maps.Keys(set)) {
		s = append(s, Requirement{key: k, operator: Equals, values: []string{set[k]}})
	}
	return s
}

// FromLabelSelector converts an API LabelSelector: nil selects nothing, an empty
// one everything; matchLabels become = requirements and matchExpressions In,
// NotIn, Exists, DoesNotExist requirements, validated by NewRequirement.
func FromLabelSelector(ls *api.LabelSelector) (Selector, error) {
	if ls == nil {
		return Nothing(), nil
	}
	if len(ls.MatchLabels)+len(ls.MatchExpressions) == 0 {
		return Everything(), nil
	}
	reqs := make([]Requirement, 0, len(ls.MatchLabels)+len(ls.MatchExpressions))
	for _, k := range slices.Sorted(maps.Keys(ls.MatchLabels)) {
		r, err := NewRequirement(k, Equals, []string{ls.MatchLabels[k]})
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}
	for _, expr := range ls.MatchExpressions {
		var op Operator
		switch expr.Operator {
		case api.LabelSelectorOpIn:
			op = In
		case api.LabelSelectorOpNotIn:
			op = NotIn
		case api.LabelSelectorOpExists:
			op = Exists
		case api.LabelSelectorOpDoesNotExist:
			op = DoesNotExist
		default:
			return nil, fmt.Errorf("%q is not a valid label selector operator", expr.Operator)
		}
		r, err := NewRequirement(expr.Key, op, slices.Clone(expr.Values))
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}
	return newSelector(reqs), nil
}

// FormatLabelSelector renders an API LabelSelector in the Parse syntax, e.g.
// "app=d1" or "app in (a,b),tier!=x"; this is the form of a Scale's
// status.selector. It returns "" for a nil or empty selector (kubectl prints
// that as <none>) and "<error>" for an invalid one.
func FormatLabelSelector(ls *api.LabelSelector) string {
	s, err := FromLabelSelector(ls)
	if err != nil {
		return "<error>"
	}
	return s.String()
}
