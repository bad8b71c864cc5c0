package printers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// JSONPath is a parsed kubectl-style JSONPath template. Build it with
// ParseJSONPath; it is immutable and safe for concurrent use.
type JSONPath struct {
	nodes []jpNode
}

// jpNode is literal text, a path, or a range block over a path.
type jpNode struct {
	text  string
	isTxt bool
	path  []jpStep
	isRng bool
	body  []jpNode
}

type jpStep struct {
	kind   byte // 'f' field, 'i' index, '*' wildcard, '?' filter
	field  string
	index  int
	filter *jpFilter
}

type jpFilter struct {
	path  []jpStep
	op    string // "" (exists), "==", "!="
	value string
}

// ErrJSONPath matches every JSONPath parse error.
var ErrJSONPath = errors.New("jsonpath")

// ParseJSONPath parses a template such as "{.status.phase}" or
// `{range .items[*]}{.metadata.name}{"\n"}{end}`. Text outside braces is
// printed as is. Inside braces: a path, a quoted string, "range PATH" ... "end".
// A path is an optional "$" or "@" followed by steps: ".name", "['name']",
// "[N]" (negative counts from the end), "[*]" or ".*" (all elements or values),
// and filters "[?(@.path)]", "[?(@.path==VALUE)]", "[?(@.path!=VALUE)]" where
// VALUE is a quoted string, a number or true/false. A template without braces
// is taken as one path ("status.phase" or ".status.phase").
func ParseJSONPath(tmpl string) (*JSONPath, error) {
	if !strings.Contains(tmpl, "{") {
		tmpl = "{" + tmpl + "}"
	}
	nodes, _, ended, err := parseNodes(tmpl)
	if err != nil {
		return nil, err
	}
	if ended {
		return nil, fmt.Errorf("%w: {end} without {range} in %q", ErrJSONPath, tmpl)
	}
	return &JSONPath{nodes: nodes}, nil
}

// parseNodes parses s up to its end or an {end}; it returns the nodes, the text
// after the {end}, and whether an {end} was seen.
func parseNodes(s string) ([]jpNode, string, bool, error) {
	var nodes []jpNode
	for s != "" {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			return append(nodes, jpNode{text: s, isTxt: true}), "", false, nil
		}
		if open > 0 {
			nodes = append(nodes, jpNode{text: s[:open], isTxt: true})
		}
		closeIdx := matchingBrace(s[open:])
		if closeIdx < 0 {
			return nil, "", false, fmt.Errorf("%w: unclosed { in %q", ErrJSONPath, s)
		}
		action := strings.TrimSpace(s[open+1 : open+closeIdx])
		s = s[open+closeIdx+1:]
		switch {
		case action == "end":
			return nodes, s, true, nil
		case strings.HasPrefix(action, "range "):
			p, err := parsePath(strings.TrimSpace(strings.TrimPrefix(action, "range ")))
			if err != nil {
				return nil, "", false, err
			}
			body, rest, ended, err := parseNodes(s)
			if err != nil {
				return nil, "", false, err
			}
			if !ended {
				return nil, "", false, fmt.Errorf("%w: {range} without {end}", ErrJSONPath)
			}
			s = rest
			nodes = append(nodes, jpNode{isRng: true, path: p, body: body})
		case strings.HasPrefix(action, `"`) || strings.HasPrefix(action, "'"):
			text, err := unquote(action)
			if err != nil {
				return nil, "", false, err
			}
			nodes = append(nodes, jpNode{text: text, isTxt: true})
		default:
			p, err := parsePath(action)
			if err != nil {
				return nil, "", false, err
			}
			nodes = append(nodes, jpNode{path: p})
		}
	}
	return nodes, "", false, nil
}

func matchingBrace(s string) int {
	depth, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func unquote(s string) (string, error) {
	if strings.HasPrefix(s, "'") {
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return "", fmt.Errorf("%w: bad string %s", ErrJSONPath, s)
		}
		return s[1 : len(s)-1], nil
	}
	t, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("%w: bad string %s", ErrJSONPath, s)
	}
	return t, nil
}

// parsePath parses a path expression (see ParseJSONPath).
func parsePath(s string) ([]jpStep, error) {
	orig := s
	s = strings.TrimPrefix(s, "$")
	s = strings.TrimPrefix(s, "@")
	var steps []jpStep
	for s != "" {
		switch {
		case strings.HasPrefix(s, ".."):
			return nil, fmt.Errorf("%w: recursive descent (..) is not supported in %q", ErrJSONPath, orig)
		case s[0] == '.':
			s = s[1:]
			if strings.HasPrefix(s, "*") {
				steps = append(steps, jpStep{kind: '*'})
				s = s[1:]
				continue
			}
			n := strings.IndexAny(s, ".[")
			if n < 0 {
				n = len(s)
			}
			if n == 0 {
				if s == "" && len(steps) == 0 {
					return steps, nil // "." alone: the root
				}
				return nil, fmt.Errorf("%w: empty field name in %q", ErrJSONPath, orig)
			}
			steps = append(steps, jpStep{kind: 'f', field: s[:n]})
			s = s[n:]
		case s[0] == '[':
			end := matchingBracket(s)
			if end < 0 {
				return nil, fmt.Errorf("%w: unclosed [ in %q", ErrJSONPath, orig)
			}
			inner := strings.TrimSpace(s[1:end])
			s = s[end+1:]
			st, err := parseBracket(inner, orig)
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
		default:
			if len(steps) == 0 { // "status.phase" without the leading dot
				s = "." + s
				continue
			}
			return nil, fmt.Errorf("%w: unexpected %q in %q", ErrJSONPath, s, orig)
		}
	}
	return steps, nil
}

func matchingBracket(s string) int {
	depth, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func parseBracket(inner, orig string) (jpStep, error) {
	switch {
	case inner == "*":
		return jpStep{kind: '*'}, nil
	case strings.HasPrefix(inner, "'") || strings.HasPrefix(inner, `"`):
		f, err := unquote(inner)
		return jpStep{kind: 'f', field: f}, err
	case strings.HasPrefix(inner, "?(") && strings.HasSuffix(inner, ")"):
		expr := strings.TrimSpace(inner[2 : len(inner)-1])
		f := &jpFilter{}
		lhs := expr
		for _, op := range []string{"==", "!="} {
			if i := strings.Index(expr, op); i >= 0 {
				f.op = op
				lhs = strings.TrimSpace(expr[:i])
				v := strings.TrimSpace(expr[i+len(op):])
				if strings.HasPrefix(v, "'") || strings.HasPrefix(v, `"`) {
					u, err := unquote(v)
					if err != nil {
						return jpStep{}, err
					}
					v = u
				}
				f.value = v
				break
			}
		}
		if !strings.HasPrefix(lhs, "@") {
			return jpStep{}, fmt.Errorf("%w: filter must start with @ in %q", ErrJSONPath, orig)
		}
		p, err := parsePath(lhs)
		if err != nil {
			return jpStep{}, err
		}
		f.path = p
		return jpStep{kind: '?', filter: f}, nil
	}
	n, err := strconv.Atoi(inner)
	if err != nil {
		return jpStep{}, fmt.Errorf("%w: unsupported subscript [%s] in %q", ErrJSONPath, inner, orig)
	}
	return jpStep{kind: 'i', index: n}, nil
}

// Find returns the values the template's paths select in data (a
// JSON-compatible value), in order; text nodes are ignored.
func (j *JSONPath) Find(data any) []any {
	var out []any
	var walk func(nodes []jpNode, cur any)
	walk = func(nodes []jpNode, cur any) {
		for _, n := range nodes {
			switch {
			case n.isTxt:
			case n.isRng:
				for _, v := range evalPath(n.path, cur) {
					walk(n.body, v)
				}
			default:
				out = append(out, evalPath(n.path, cur)...)
			}
		}
	}
	walk(j.nodes, data)
	return out
}

// Execute writes the template applied to data to w. Several values of one path
// are separated by spaces; strings print raw, other values as compact JSON. A
// path that selects nothing prints nothing.
func (j *JSONPath) Execute(w io.Writer, data any) error {
	var b strings.Builder
	var walk func(nodes []jpNode, cur any)
	walk = func(nodes []jpNode, cur any) {
		for _, n := range nodes {
			switch {
			case n.isTxt:
				b.WriteString(n.text)
			case n.isRng:
				for _, v := range evalPath(n.path, cur) {
					walk(n.body, v)
				}
			default:
				for i, v := range evalPath(n.path, cur) {
					if i > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(FormatValue(v))
				}
			}
		}
	}
	walk(j.nodes, data)
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatValue renders a JSONPath result: strings raw, integral numbers without
// decimals, everything else as compact JSON.
func FormatValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64, int64, bool:
		return FormatCell(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func evalPath(steps []jpStep, root any) []any {
	cur := []any{root}
	for _, st := range steps {
		var next []any
		for _, v := range cur {
			switch st.kind {
			case 'f':
				if m, ok := v.(map[string]any); ok {
					if x, ok := m[st.field]; ok {
						next = append(next, x)
					}
				}
			case 'i':
				if s, ok := v.([]any); ok {
					i := st.index
					if i < 0 {
						i += len(s)
					}
					if i >= 0 && i < len(s) {
						next = append(next, s[i])
					}
				}
			case '*':
				switch x := v.(type) {
				case []any:
					next = append(next, x...)
				case map[string]any:
					for _, k := range sortedKeys(x) {
						next = append(next, x[k])
					}
				}
			case '?':
				if s, ok := v.([]any); ok {
					for _, e := range s {
						if st.filter.match(e) {
							next = append(next, e)
						}
					}
				}
			}
		}
		cur = next
	}
	return cur
}

func (f *jpFilter) match(v any) bool {
	got := evalPath(f.path, v)
	switch f.op {
	case "":
		return len(got) > 0
	case "==":
		return len(got) > 0 && FormatValue(got[0]) == f.value
	default: // "!="
		return len(got) == 0 || FormatValue(got[0]) != f.value
	}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
