package fields

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Operator relates a field to its value.
type Operator string

// The operators. "==" parses as Equals.
const (
	Equals    Operator = "="
	NotEquals Operator = "!="
)

// Requirement is one term of a field selector.
type Requirement struct {
	Field    string
	Operator Operator
	Value    string
}

// String renders the term with its value escaped.
func (r Requirement) String() string { return r.Field + string(r.Operator) + EscapeValue(r.Value) }

// Matches reports whether fields satisfy the term; a missing field is "".
func (r Requirement) Matches(fields map[string]string) bool {
	if r.Operator == NotEquals {
		return fields[r.Field] != r.Value
	}
	return fields[r.Field] == r.Value
}

// Selector selects objects by the values of their selectable fields.
type Selector interface {
	// Matches reports whether fields satisfy every requirement.
	Matches(fields map[string]string) bool
	// Empty reports whether the selector selects everything.
	Empty() bool
	// String renders the selector in the syntax Parse accepts.
	String() string
	// Requirements returns the requirements in canonical order.
	Requirements() []Requirement
	// RequiresExactMatch reports whether the selector requires field to equal
	// a value (a "=" term on it), and which.
	RequiresExactMatch(field string) (value string, found bool)
}

// selector is the AND of its requirements, sorted by their text.
type selector []Requirement

func (s selector) Matches(fields map[string]string) bool {
	for _, r := range s {
		if !r.Matches(fields) {
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

func (s selector) RequiresExactMatch(field string) (string, bool) {
	for _, r := range s {
		if r.Field == field && r.Operator == Equals {
			return r.Value, true
		}
	}
	return "", false
}

// Everything returns the selector that matches everything.
func Everything() Selector { return selector(nil) }

// NewSelector returns the AND of the requirements.
func NewSelector(reqs ...Requirement) Selector {
	s := selector(slices.Clone(reqs))
	slices.SortFunc(s, func(a, b Requirement) int { return strings.Compare(a.String(), b.String()) })
	return s
}

// OneTermEqualSelector returns the selector field=value.
func OneTermEqualSelector(field, value string) Selector {
	return selector{{Field: field, Operator: Equals, Value: value}}
}

// SelectorFromSet returns the selector requiring every field=value of set;
// nil or empty selects everything.
func SelectorFromSet(set map[string]string) Selector {
	reqs := make([]Requirement, 0, len(set))
	for f, v := range set {
		reqs = append(reqs, Requirement{Field: f, Operator: Equals, Value: v})
	}
	return NewSelector(reqs...)
}

// Parse parses a field selector such as "metadata.name=x,status.phase!=Running".
func Parse(s string) (Selector, error) {
	var reqs []Requirement
	for _, term := range splitTerms(s) {
		if term == "" {
			continue
		}
		lhs, op, rhs, ok := splitTerm(term)
		if !ok {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, term)
		}
		value, err := UnescapeValue(rhs)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, Requirement{Field: lhs, Operator: op, Value: value})
	}
	return NewSelector(reqs...), nil
}

// splitTerms splits at commas not escaped by a backslash; the escapes stay in
// the terms.
func splitTerms(s string) []string {
	if s == "" {
		return nil
	}
	var terms []string
	start, escaped := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case escaped:
			escaped = false
		case s[i] == '\\':
			escaped = true
		case s[i] == ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

// splitTerm splits a term at its first operator ("!=", "==" or "=").
func splitTerm(term string) (lhs string, op Operator, rhs string, ok bool) {
	for i := 0; i < len(term); i++ {
		switch {
		case strings.HasPrefix(term[i:], "!="):
			return term[:i], NotEquals, term[i+2:], true
		case strings.HasPrefix(term[i:], "=="):
			return term[:i], Equals, term[i+2:], true
		case term[i] == '=':
			return term[:i], Equals, term[i+1:], true
		}
	}
	return "", "", "", false
}

// EscapeValue escapes '\', ',' and '=' with a backslash so that any string can
// be a field selector value.
func EscapeValue(s string) string {
	if !strings.ContainsAny(s, `\,=`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', ',', '=':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// UnescapeValue reverses EscapeValue. It rejects an unknown escape sequence, a
// trailing '\' and an unescaped ',' or '='. Other bytes are kept verbatim.
func UnescapeValue(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 == len(s) {
				return "", fmt.Errorf("invalid field selector: invalid escape sequence: %s", `\`)
			}
			switch s[i+1] {
			case '\\', ',', '=':
				b.WriteByte(s[i+1])
				i++
			default:
				r, _ := utf8.DecodeRuneInString(s[i+1:])
				return "", fmt.Errorf("invalid field selector: invalid escape sequence: %s", string([]rune{'\\', r}))
			}
		case ',', '=':
			// Kubernetes prints the rune as a number; so do we.
			return "", fmt.Errorf("invalid field selector: unescaped character in value: %v", rune(s[i]))
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// UnsupportedFieldError reports a selector on a field the resource cannot be
// selected by.
type UnsupportedFieldError struct {
	Field string
}

// Error renders "field label not supported: <field>", Kubernetes' text.
func (e *UnsupportedFieldError) Error() string { return "field label not supported: " + e.Field }

// CheckSupported returns an *UnsupportedFieldError for the first requirement,
// in canonical order, whose field supported rejects, and nil otherwise.
func CheckSupported(sel Selector, supported func(field string) bool) error {
	for _, r := range sel.Requirements() {
		if !supported(r.Field) {
			return &UnsupportedFieldError{Field: r.Field}
		}
	}
	return nil
}
