package api

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
)

// DuplicateFields returns the paths of the object keys that appear more than
// once in the same JSON object of data ("spec.replicas",
// "spec.containers[0].name"), in the order their repeats appear, as
// Kubernetes' strict decoding reports them. data should be valid JSON (decode
// it first); malformed input ends the scan early, never panics. The scan
// allocates only for the paths it returns.
func DuplicateFields(data []byte) []string {
	s := dupScanners.Get().(*dupScanner)
	s.data, s.i, s.path, s.dups = data, 0, s.path[:0], nil
	s.value(0)
	dups := s.dups
	// Drop every reference into data before the scanner is reused.
	for i := range s.keys {
		clear(s.keys[i][:cap(s.keys[i])])
		s.keys[i] = s.keys[i][:0]
	}
	clear(s.path[:cap(s.path)])
	s.data, s.dups = nil, nil
	dupScanners.Put(s)
	return dups
}

var dupScanners = sync.Pool{New: func() any { return new(dupScanner) }}

type dupSegment struct {
	key   []byte // nil for an array index
	index int
}

type dupScanner struct {
	data []byte
	i    int
	path []dupSegment
	keys [][][]byte // keys seen so far, per object depth (reused)
	dups []string
}

func (s *dupScanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *dupScanner) value(depth int) bool {
	s.ws()
	if s.i >= len(s.data) {
		return false
	}
	switch s.data[s.i] {
	case '{':
		return s.object(depth)
	case '[':
		return s.array(depth)
	case '"':
		_, ok := s.str()
		return ok
	}
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return true
		}
		s.i++
	}
	return true
}

// str reads a string and returns its raw content (between the quotes).
func (s *dupScanner) str() ([]byte, bool) {
	start := s.i + 1
	for s.i = start; s.i < len(s.data); s.i++ {
		switch s.data[s.i] {
		case '\\':
			s.i++
		case '"':
			raw := s.data[start:s.i]
			s.i++
			return raw, true
		}
	}
	return nil, false
}

func (s *dupScanner) object(depth int) bool {
	s.i++ // {
	for len(s.keys) <= depth {
		s.keys = append(s.keys, nil)
	}
	s.keys[depth] = s.keys[depth][:0]
	for {
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		if s.data[s.i] == '}' {
			s.i++
			return true
		}
		if s.data[s.i] != '"' {
			return false
		}
		key, ok := s.str()
		if !ok {
			return false
		}
		key = unescapeKey(key)
		dup := false
		for _, k := range s.keys[depth] {
			if bytes.Equal(k, key) {
				dup = true
				break
			}
		}
		s.path = append(s.path, dupSegment{key: key})
		if dup {
			s.dups = append(s.dups, s.pathString())
		} else {
			s.keys[depth] = append(s.keys[depth], key)
		}
		s.ws()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return false
		}
		s.i++
		// Nested objects reuse deeper key lists; ours is restored by index.
		if !s.value(depth + 1) {
			return false
		}
		s.path = s.path[:len(s.path)-1]
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *dupScanner) array(depth int) bool {
	s.i++ // [
	for n := 0; ; n++ {
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		if s.data[s.i] == ']' {
			s.i++
			return true
		}
		s.path = append(s.path, dupSegment{index: n})
		if !s.value(depth + 1) {
			return false
		}
		s.path = s.path[:len(s.path)-1]
		s.ws()
		if s.i >= len(s.data) {
			return false
		}
		switch s.data[s.i] {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

func (s *dupScanner) pathString() string {
	var b strings.Builder
	for _, seg := range s.path {
		if seg.key == nil {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(seg.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(seg.key)
	}
	return b.String()
}

// unescapeKey decodes a key with escapes ("\u0061" is "a"); plain keys are
// returned as they are.
func unescapeKey(raw []byte) []byte {
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	u, err := strconv.Unquote(`"` + string(raw) + `"`)
	if err != nil {
		return raw
	}
	return []byte(u)
}
