package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The package's own JSON reader and writer. They produce and take exactly what
// encoding/json does with a Decoder in UseNumber mode (maps, slices, strings,
// json.Number, bool, nil; invalid UTF-8 and lone surrogates read as U+FFFD;
// nesting limited to 10000) and with an Encoder without HTML escaping (sorted
// keys), without reflection: patching is mostly reading and writing the
// document. FuzzJSONPatch and FuzzMergePatch check both against encoding/json.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// decode parses exactly one JSON value, keeping numbers as json.Number.
func decode(data []byte) (any, error) {
	return read(reader{data: data})
}

// decodeKeepingText is decode, except that a string value whose JSON text is
// not the one encoding/json would write (HTML characters escaped) is a
// textString, so that JSON patch can compare strings by their text.
func decodeKeepingText(data []byte) (any, error) {
	return read(reader{data: data, keepText: true})
}

func read(p reader) (any, error) {
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

type reader struct {
	data     []byte
	i        int
	depth    int
	keepText bool
}

func (p *reader) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *reader) value() (any, error) {
	if p.i >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		if p.keepText {
			return p.textStr()
		}
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("invalid character %q looking for a value", c)
	}
}

func (p *reader) literal(word string) error {
	if !bytes.HasPrefix(p.data[p.i:], []byte(word)) {
		return p.errorf("invalid literal, expected %s", word)
	}
	p.i += len(word)
	return nil
}

func (p *reader) enter() error {
	if p.depth++; p.depth > maxDepth {
		return p.errorf("exceeded max depth")
	}
	p.i++
	p.skipSpace()
	return nil
}

func (p *reader) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	m := map[string]any{}
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		p.depth--
		return m, nil
	}
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.errorf("expected a string for an object key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.errorf("expected ':' after an object key")
		}
		p.i++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[k] = v
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case '}':
			p.i++
			p.depth--
			return m, nil
		default:
			return nil, p.errorf("invalid character %q after an object member", p.data[p.i])
		}
	}
}

func (p *reader) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	a := []any{}
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		p.depth--
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			p.depth--
			return a, nil
		default:
			return nil, p.errorf("invalid character %q after an array element", p.data[p.i])
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *reader) number() (any, error) {
	d, start := p.data, p.i
	i := p.i
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		p.i = i
		return nil, p.errorf("invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			p.i = i
			return nil, p.errorf("invalid number: digits must follow '.'")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			p.i = i
			return nil, p.errorf("invalid number: digits must follow the exponent")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	p.i = i
	return json.Number(d[start:i]), nil
}

// textStr reads a string value, as a textString when its text is not the
// canonical one.
func (p *reader) textStr() (any, error) {
	start := p.i
	s, err := p.str()
	if err != nil {
		return nil, err
	}
	text := p.data[start:p.i]
	if bytes.IndexByte(text, '\\') < 0 && !strings.ContainsAny(s, "<>&\u2028\u2029") && utf8.Valid(text) {
		return s, nil // the fast path: nothing canonical text would escape
	}
	if string(appendString(nil, s, true)) == string(text) {
		return s, nil
	}
	return textString{s: s, text: string(text)}, nil
}

// str reads a string; p.data[p.i] is the opening quote.
func (p *reader) str() (string, error) {
	d := p.data
	start := p.i + 1
	// Fast path: no escapes, no control characters, valid UTF-8.
	i := start
	for i < len(d) {
		c := d[i]
		if c == '"' {
			p.i = i + 1
			return string(d[start:i]), nil
		}
		if c == '\\' || c < ' ' {
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(d[i:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		i += size
	}
	b := make([]byte, 0, i-start+16)
	b = append(b, d[start:i]...)
	for i < len(d) {
		c := d[i]
		switch {
		case c == '"':
			p.i = i + 1
			return string(b), nil
		case c < ' ':
			p.i = i
			return "", p.errorf("invalid control character in a string")
		case c == '\\':
			if i+1 >= len(d) {
				p.i = i
				return "", p.errorf("unexpected end of input in a string escape")
			}
			switch e := d[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i += 2
			case 'b':
				b = append(b, '\b')
				i += 2
			case 'f':
				b = append(b, '\f')
				i += 2
			case 'n':
				b = append(b, '\n')
				i += 2
			case 'r':
				b = append(b, '\r')
				i += 2
			case 't':
				b = append(b, '\t')
				i += 2
			case 'u':
				r := hex4(d[i+2:])
				if r < 0 {
					p.i = i
					return "", p.errorf("invalid \\u escape in a string")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+1 < len(d) && d[i] == '\\' && d[i+1] == 'u' {
						r2 = hex4(d[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 6
						continue
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				p.i = i
				return "", p.errorf("invalid escape %q in a string", e)
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			b = utf8.AppendRune(b, r)
			i += size
		}
	}
	p.i = i
	return "", p.errorf("unexpected end of input in a string")
}

// hex4 reads four hex digits, or returns -1.
func hex4(d []byte) rune {
	if len(d) < 4 {
		return -1
	}
	var r rune
	for _, c := range d[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// encode renders v as compact JSON with sorted keys and without HTML escaping.
func encode(v any) ([]byte, error) {
	return appendValue(make([]byte, 0, 512), v)
}

func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		if x {
			return append(b, "true"...), nil
		}
		return append(b, "false"...), nil
	case string:
		return appendString(b, x, false), nil
	case textString:
		return appendString(b, x.s, false), nil
	case json.Number:
		if x == "" {
			return append(b, '0'), nil
		}
		return append(b, x...), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		var err error
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k, false)
			b = append(b, ':')
			if b, err = appendValue(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		var err error
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case patchNull:
		return append(b, "null"...), nil
	}
	// Anything else, as encoding/json writes it.
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s quoted as encoding/json does, escaping '<', '>' and
// '&' only when html is set.
func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// textString is a string value of a JSON patch or of the document it applies
// to whose JSON text is not the canonical one (encoding/json's, HTML
// characters escaped), for example "\u0041" or "a<b". Kubernetes compares
// strings in a "test" operation by their text, so the text is kept. It
// encodes as its value.
type textString struct {
	s    string
	text string
}

// MarshalJSON returns the kept text.
func (t textString) MarshalJSON() ([]byte, error) { return []byte(t.text), nil }

// jsonText returns the JSON text of a string value.
func jsonText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return string(appendString(nil, x, true)), true
	case textString:
		return x.text, true
	}
	return "", false
}

// copiedText returns the string value that a copy of t is: the library copies
// through encoding/json, which escapes the HTML characters of the text.
func copiedText(t textString) any {
	text := string(appendHTMLEscaped(nil, t.text))
	if string(appendString(nil, t.s, true)) == text {
		return t.s
	}
	return textString{s: t.s, text: text}
}

// appendHTMLEscaped appends JSON text with '<', '>', '&', U+2028 and U+2029
// escaped, as encoding/json's compacting of a json.RawMessage does.
func appendHTMLEscaped(b []byte, text string) []byte {
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c == '<' || c == '>' || c == '&' {
			b = append(b, text[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			start = i + 1
		}
		if c == 0xE2 && i+2 < len(text) && text[i+1] == 0x80 && text[i+2]&^1 == 0xA8 {
			b = append(b, text[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[text[i+2]&0xf])
			start = i + 3
			i += 2
		}
	}
	return append(b, text[start:]...)
}
