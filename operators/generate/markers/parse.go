package markers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse parses one marker's text (without the leading "//", with the '+')
// for target. It returns nil and no error for a marker the registry does
// not define for target.
func (r Registry) Parse(text string, t Target) (*Marker, error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "+") {
		return nil, nil
	}
	d, fields := r.lookup(text[1:], t)
	if d == nil {
		return nil, nil
	}
	v, err := parseValue(d, fields)
	if err != nil {
		return nil, fmt.Errorf("+%s: %w", d.Name, err)
	}
	return &Marker{Name: d.Name, Value: v}, nil
}

func parseValue(d *Def, fields string) (any, error) {
	s := &scanner{src: fields}
	var v any
	var err error
	switch d.Kind {
	case Flag:
		if strings.TrimSpace(fields) != "" {
			return nil, fmt.Errorf("takes no value, got %q", fields)
		}
		return nil, nil
	case JSON:
		// +default=ref(GoConstant) names a Go constant: skipped, as
		// controller-gen does.
		if t := strings.TrimSpace(fields); t == "" || strings.HasPrefix(t, "ref(") {
			return nil, nil
		}
		if err := json.Unmarshal([]byte(fields), &v); err != nil {
			return nil, fmt.Errorf("value is not JSON: %w", err)
		}
		return v, nil
	case Args:
		v, err = s.args(d)
	default:
		if s.peek() == eof {
			return zero(d.Kind), nil
		}
		v, err = s.value(d.Kind, false)
	}
	if err != nil {
		return nil, err
	}
	if s.peek() != eof {
		return nil, fmt.Errorf("extra arguments provided: %q", s.src[s.pos:])
	}
	return v, nil
}

func zero(k Kind) any {
	switch k {
	case Int:
		return 0
	case Number:
		return 0.0
	case Bool:
		return false
	case Strings:
		return []string(nil)
	case Anys:
		return []any(nil)
	}
	return ""
}

const eof = -1

type scanner struct {
	src string
	pos int
}

// peek skips white space and returns the next byte, or eof.
func (s *scanner) peek() int {
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
	if s.pos >= len(s.src) {
		return eof
	}
	return int(s.src[s.pos])
}

func (s *scanner) expect(c byte) error {
	if s.peek() != int(c) {
		return fmt.Errorf("expected %q at %q", c, s.src[s.pos:])
	}
	s.pos++
	return nil
}

func (s *scanner) args(d *Def) (map[string]any, error) {
	out := map[string]any{}
	for s.peek() != eof {
		start := s.pos
		for s.pos < len(s.src) && (isIdent(s.src[s.pos])) {
			s.pos++
		}
		name := s.src[start:s.pos]
		if name == "" {
			return nil, fmt.Errorf("expected argument name at %q", s.src[start:])
		}
		if err := s.expect('='); err != nil {
			return nil, err
		}
		var arg *Arg
		for i := range d.Args {
			if d.Args[i].Name == name {
				arg = &d.Args[i]
			}
		}
		if arg == nil {
			return nil, fmt.Errorf("unknown argument %q", name)
		}
		v, err := s.value(arg.Kind, false)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", name, err)
		}
		out[name] = v
		if s.peek() == eof {
			break
		}
		if err := s.expect(','); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, a := range d.Args {
		if _, ok := out[a.Name]; !ok && !a.Optional {
			errs = append(errs, fmt.Errorf("missing argument %q", a.Name))
		}
	}
	return out, errors.Join(errs...)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (s *scanner) value(k Kind, inSlice bool) (any, error) {
	switch k {
	case String:
		return s.str(false)
	case Int:
		t := s.number()
		n, err := strconv.Atoi(t)
		if err != nil {
			return nil, fmt.Errorf("expected an integer, got %q", t)
		}
		return n, nil
	case Number:
		t := s.number()
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, fmt.Errorf("expected a number, got %q", t)
		}
		return f, nil
	case Bool:
		t := s.word()
		switch t {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("expected true or false, got %q", t)
	case Strings:
		var out []string
		err := s.list(func() error {
			v, err := s.str(false)
			out = append(out, v)
			return err
		})
		return out, err
	case Anys:
		var out []any
		err := s.list(func() error {
			v, err := s.value(Any, true)
			out = append(out, v)
			return err
		})
		return out, err
	case Any:
		return s.guess(inSlice)
	}
	return nil, fmt.Errorf("unsupported value kind %d", k)
}

// list parses {a,b} or a;b.
func (s *scanner) list(item func() error) error {
	if s.peek() == '{' {
		s.pos++
		for s.peek() != '}' {
			if s.peek() == eof {
				return errors.New("unterminated list: missing '}'")
			}
			if err := item(); err != nil {
				return err
			}
			switch s.peek() {
			case '}':
				continue
			case eof:
				return errors.New("unterminated list: missing '}'")
			}
			if err := s.expect(','); err != nil {
				return err
			}
		}
		s.pos++
		return nil
	}
	for c := s.peek(); c != ',' && c != '}' && c != eof; c = s.peek() {
		if err := item(); err != nil {
			return err
		}
		switch s.peek() {
		case ',', '}', eof:
			return nil
		case ';':
			s.pos++
		default:
			return fmt.Errorf("expected ';' at %q", s.src[s.pos:])
		}
	}
	return nil
}

// str parses a quoted or bare string; a bare one ends at , ; } (and : in a
// map key).
func (s *scanner) str(mapKey bool) (string, error) {
	switch s.peek() {
	case '"':
		end := s.pos + 1
		for end < len(s.src) && s.src[end] != '"' {
			if s.src[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(s.src) {
			return "", fmt.Errorf("unterminated string %s", s.src[s.pos:])
		}
		v, err := strconv.Unquote(s.src[s.pos : end+1])
		if err != nil {
			return "", fmt.Errorf("unable to parse string %s: %w", s.src[s.pos:end+1], err)
		}
		s.pos = end + 1
		return v, nil
	case '`':
		end := strings.IndexByte(s.src[s.pos+1:], '`')
		if end < 0 {
			return "", fmt.Errorf("unterminated string %s", s.src[s.pos:])
		}
		v := s.src[s.pos+1 : s.pos+1+end]
		s.pos += end + 2
		return v, nil
	}
	start := s.pos
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		if c == ',' || c == ';' || c == '}' || (mapKey && c == ':') {
			break
		}
		s.pos++
	}
	return strings.TrimSpace(s.src[start:s.pos]), nil
}

// word reads letters, digits and _.
func (s *scanner) word() string {
	s.peek()
	start := s.pos
	for s.pos < len(s.src) && isIdent(s.src[s.pos]) {
		s.pos++
	}
	return s.src[start:s.pos]
}

// number reads a (possibly negative) integer or float literal.
func (s *scanner) number() string {
	s.peek()
	start := s.pos
	if s.pos < len(s.src) && (s.src[s.pos] == '-' || s.src[s.pos] == '+') {
		s.pos++
	}
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == 'x' || c == '_' ||
			(c == '-' || c == '+') && (s.src[s.pos-1] == 'e' || s.src[s.pos-1] == 'E')) {
			break
		}
		s.pos++
	}
	return s.src[start:s.pos]
}

// guess parses a value of a type guessed from its text, as controller-tools
// does for Any arguments. At the top level (not inSlice) a ';' before the
// first ',' makes it a list.
func (s *scanner) guess(inSlice bool) (any, error) {
	if !inSlice && s.semicolonList() {
		var out []any
		err := s.list(func() error {
			v, err := s.guess(true)
			out = append(out, v)
			return err
		})
		return out, err
	}
	switch c := s.peek(); c {
	case '"', '`':
		return s.str(false)
	case '{':
		save := s.pos
		s.pos++
		if s.peek() == '}' {
			s.pos++
			return map[string]any{}, nil
		}
		isMap := false
		if c := s.peek(); c != '{' {
			if _, err := s.str(true); err == nil && s.peek() == ':' {
				isMap = true
			}
		}
		s.pos = save
		if isMap {
			return s.dict()
		}
		var out []any
		err := s.list(func() error {
			v, err := s.guess(true)
			out = append(out, v)
			return err
		})
		return out, err
	}
	save := s.pos
	if w := s.word(); w == "true" || w == "false" {
		if d := s.peek(); d == ',' || d == ';' || d == '}' || d == eof {
			return w == "true", nil
		}
	}
	s.pos = save
	if t := s.number(); t != "" && t != "-" {
		if d := s.peek(); d == ',' || d == ';' || d == '}' || d == eof || d == ':' {
			if n, err := strconv.Atoi(t); err == nil {
				return n, nil
			}
			if f, err := strconv.ParseFloat(t, 64); err == nil {
				return f, nil
			}
		}
	}
	s.pos = save
	return s.str(false)
}

// semicolonList reports whether a ';' comes before the first ',' (outside
// quotes) from the current position.
func (s *scanner) semicolonList() bool {
	for i := s.pos; i < len(s.src); i++ {
		switch s.src[i] {
		case ',':
			return false
		case ';':
			return true
		case '"':
			for i++; i < len(s.src) && s.src[i] != '"'; i++ {
				if s.src[i] == '\\' {
					i++
				}
			}
		case '`':
			if j := strings.IndexByte(s.src[i+1:], '`'); j >= 0 {
				i += j + 1
			}
		}
	}
	return false
}

// dict parses {key: value, ...}.
func (s *scanner) dict() (map[string]any, error) {
	out := map[string]any{}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	for s.peek() != '}' {
		if s.peek() == eof {
			return nil, errors.New("unterminated map: missing '}'")
		}
		k, err := s.str(true)
		if err != nil {
			return nil, err
		}
		if err := s.expect(':'); err != nil {
			return nil, err
		}
		v, err := s.guess(true)
		if err != nil {
			return nil, err
		}
		out[k] = v
		if s.peek() == '}' {
			break
		}
		if err := s.expect(','); err != nil {
			return nil, err
		}
	}
	s.pos++
	return out, nil
}
