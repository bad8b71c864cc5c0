package expand

import (
	"fmt"
	"slices"
	"strings"
)

// Expand expands $(VAR) references in s using lookup.
func Expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok && name != "" {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// MapLookup returns a lookup over the given maps, earlier maps winning.
func MapLookup(maps ...map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		for _, m := range maps {
			if v, ok := m[k]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// Strict expands s like Expand but requires every $(NAME) it references to
// be defined and non-empty, as a volume mount's subPathExpr must be: it
// returns an error naming the missing variables (sorted) otherwise.
func Strict(s string, lookup func(string) (string, bool)) (string, error) {
	var missing []string
	out := Expand(s, func(name string) (string, bool) {
		v, ok := lookup(name)
		if (!ok || v == "") && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		return v, true
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("missing value for %s", strings.Join(missing, ", "))
	}
	return out, nil
}
