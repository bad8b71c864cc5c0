package patch

import (
	"errors"
	"testing"
)

// canonical re-encodes JSON text with sorted keys, keeping numbers verbatim.
func canonical(t *testing.T, s string) string {
	t.Helper()
	v, err := decode([]byte(s))
	if err != nil {
		t.Fatalf("bad JSON in test: %v: %s", err, s)
	}
	b, err := encode(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return string(b)
}

// check compares a patch result with the expected JSON or error kind.
func check(t *testing.T, got []byte, err error, want string, wantErr error) {
	t.Helper()
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Fatalf("error = %v, want %v (result %s)", err, wantErr, got)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if g, w := string(got), canonical(t, want); g != w {
		t.Fatalf("result mismatch\n got: %s\nwant: %s", g, w)
	}
}

// valueAt returns the value at the JSON pointer ptr of root; a missing member
// is an error.
func valueAt(root any, ptr string) (any, error) {
	if ptr == "" {
		return root, nil
	}
	a := jsonPatcher{root: root}
	s, key, ok := a.locate(ptr)
	if !ok {
		return nil, errors.New("no container at " + ptr)
	}
	if !s.isArr {
		if _, found := s.obj[key]; !found {
			return nil, errors.New("no member at " + ptr)
		}
	}
	return s.get(key)
}
