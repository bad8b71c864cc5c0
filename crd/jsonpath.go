package crd

import (
	"fmt"
	"strconv"
	"strings"
)

// JSONPath is a parsed printer-column or selectable-field path. The supported
// subset is what CRDs use: ".a.b", ".a[0].b", ".a['k.x']" and
// ".a[?(@.type=="Ready")].status".
type JSONPath struct {
	steps []step
}

type step struct {
	name    string // field name
	index   *int   // [n]
	filter  []string
	filterV string
}

// ParseJSONPath parses p, with or without surrounding {}.
func ParseJSONPath(p string) (*JSONPath, error) {
	s := strings.TrimSpace(p)
	if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
		s = s[1 : len(s)-1]
	}
	s = strings.TrimPrefix(s, "$")
	var out JSONPath
	for len(s) > 0 {
		switch s[0] {
		case '.':
			s = s[1:]
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			if end == 0 {
				return nil, fmt.Errorf("empty field name in %q", p)
			}
			out.steps = append(out.steps, step{name: s[:end]})
			s = s[end:]
		case '[':
			end := strings.Index(s, "]")
			if end < 0 {
				return nil, fmt.Errorf("unterminated [ in %q", p)
			}
			inner := s[1:end]
			if strings.HasPrefix(inner, "?(") {
				end = strings.Index(s, ")]")
				if end < 0 {
					return nil, fmt.Errorf("unterminated filter in %q", p)
				}
				inner = s[3:end]
				end++
				st, err := parseFilter(inner)
				if err != nil {
					return nil, fmt.Errorf("%q: %w", p, err)
				}
				out.steps = append(out.steps, st)
			} else if q := strings.Trim(inner, `'"`); len(q) != len(inner) {
				out.steps = append(out.steps, step{name: q})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("unsupported subscript [%s] in %q", inner, p)
				}
				out.steps = append(out.steps, step{index: &n})
			}
			s = s[end+1:]
		default:
			return nil, fmt.Errorf("unexpected %q in %q", s[0], p)
		}
	}
	return &out, nil
}

func parseFilter(f string) (step, error) {
	lhs, rhs, ok := strings.Cut(f, "==")
	if !ok {
		return step{}, fmt.Errorf("unsupported filter %q (only @.field==\"value\")", f)
	}
	lhs = strings.TrimSpace(lhs)
	if !strings.HasPrefix(lhs, "@.") {
		return step{}, fmt.Errorf("unsupported filter %q", f)
	}
	rhs = strings.TrimSpace(rhs)
	if uq, err := strconv.Unquote(rhs); err == nil {
		rhs = uq
	} else {
		rhs = strings.Trim(rhs, `'`)
	}
	return step{filter: strings.Split(lhs[2:], "."), filterV: rhs}, nil
}

// Find returns every value the path selects in obj.
func (j *JSONPath) Find(obj any) []any {
	cur := []any{obj}
	for _, st := range j.steps {
		var next []any
		for _, v := range cur {
			switch {
			case st.filter != nil:
				l, _ := v.([]any)
				for _, e := range l {
					if fv, ok := lookup(e, st.filter); ok && fmt.Sprint(fv) == st.filterV {
						next = append(next, e)
					}
				}
			case st.index != nil:
				l, _ := v.([]any)
				i := *st.index
				if i < 0 {
					i += len(l)
				}
				if i >= 0 && i < len(l) {
					next = append(next, l[i])
				}
			default:
				if m, ok := v.(map[string]any); ok {
					if e, ok := m[st.name]; ok {
						next = append(next, e)
					}
				}
			}
		}
		cur = next
	}
	return cur
}

func lookup(v any, path []string) (any, bool) {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return v, true
}
