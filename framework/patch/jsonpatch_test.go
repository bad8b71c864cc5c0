package patch

import (
	"errors"
	"strings"
	"testing"
)

func TestJSONPatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		doc     string
		patch   string
		want    string
		wantErr error
	}{
		// RFC 6902 appendix A.
		{"add member", `{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`, `{"baz":"qux","foo":"bar"}`, nil},
		{"add array element", `{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`, `{"foo":["bar","qux","baz"]}`, nil},
		{"remove member", `{"baz":"qux","foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`, `{"foo":"bar"}`, nil},
		{"remove element", `{"foo":["bar","qux","baz"]}`, `[{"op":"remove","path":"/foo/1"}]`, `{"foo":["bar","baz"]}`, nil},
		{"replace", `{"baz":"qux","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`, `{"baz":"boo","foo":"bar"}`, nil},
		{"move member", `{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}`, `[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]`, `{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}`, nil},
		{"move element", `{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`, `{"foo":["all","cows","eat","grass"]}`, nil},
		{"test ok", `{"baz":"qux","foo":["a",2,"c"]}`, `[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]`, `{"baz":"qux","foo":["a",2,"c"]}`, nil},
		{"test fails", `{"baz":"qux"}`, `[{"op":"test","path":"/baz","value":"bar"}]`, "", ErrPatchConflict},
		{"add nested object", `{"foo":"bar"}`, `[{"op":"add","path":"/child","value":{"grandchild":{}}}]`, `{"foo":"bar","child":{"grandchild":{}}}`, nil},
		{"unknown extra member ignored", `{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux","xyz":123}]`, `{"foo":"bar","baz":"qux"}`, nil},
		{"add to missing parent", `{"foo":"bar"}`, `[{"op":"add","path":"/baz/bat","value":"qux"}]`, "", ErrPatchConflict},
		{"add array value", `{"foo":["bar"]}`, `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`, `{"foo":["bar",["abc","def"]]}`, nil},
		{"escaped pointer", `{"/":9,"~1":10}`, `[{"op":"test","path":"/~01","value":10},{"op":"replace","path":"/~1","value":11}]`, `{"/":11,"~1":10}`, nil},
		{"test string vs number", `{"/":9,"~1":10}`, `[{"op":"test","path":"/~01","value":"10"}]`, "", ErrPatchConflict},
		{"test number by value", `{"n":1}`, `[{"op":"test","path":"/n","value":1.0}]`, `{"n":1}`, nil},
		// Further cases.
		{"copy", `{"a":{"b":[1]}}`, `[{"op":"copy","from":"/a","path":"/c"},{"op":"add","path":"/c/b/-","value":2}]`, `{"a":{"b":[1]},"c":{"b":[1,2]}}`, nil},
		{"insert at end index", `{"a":[1,2]}`, `[{"op":"add","path":"/a/2","value":3}]`, `{"a":[1,2,3]}`, nil},
		{"insert at front", `{"a":[1,2]}`, `[{"op":"add","path":"/a/0","value":0}]`, `{"a":[0,1,2]}`, nil},
		{"insert past end", `{"a":[1,2]}`, `[{"op":"add","path":"/a/3","value":3}]`, "", ErrPatchConflict},
		{"leading zero index", `{"a":[1,2]}`, `[{"op":"replace","path":"/a/01","value":3}]`, "", ErrPatchConflict},
		{"remove missing", `{"a":1}`, `[{"op":"remove","path":"/b"}]`, "", ErrPatchConflict},
		{"replace missing", `{"a":1}`, `[{"op":"replace","path":"/b","value":2}]`, "", ErrPatchConflict},
		{"remove dash", `{"a":[1]}`, `[{"op":"remove","path":"/a/-"}]`, "", ErrPatchConflict},
		{"replace root", `{"a":1}`, `[{"op":"replace","path":"","value":[1]}]`, `[1]`, nil},
		{"add root", `{"a":1}`, `[{"op":"add","path":"","value":{"b":2}}]`, `{"b":2}`, nil},
		{"remove root", `{"a":1}`, `[{"op":"remove","path":""}]`, "", ErrPatchConflict},
		{"add null value", `{"a":1}`, `[{"op":"add","path":"/b","value":null}]`, `{"a":1,"b":null}`, nil},
		{"move to same path", `{"a":1}`, `[{"op":"move","from":"/a","path":"/a"}]`, `{"a":1}`, nil},
		{"move missing", `{"a":1}`, `[{"op":"move","from":"/b","path":"/c"}]`, "", ErrPatchConflict},
		{"empty patch", `{"a":12345678901234567890123}`, `[]`, `{"a":12345678901234567890123}`, nil},
		{"integer precision", `{"a":12345678901234,"f":1.50}`, `[{"op":"add","path":"/b","value":98765432109876543210}]`, `{"a":12345678901234,"b":98765432109876543210,"f":1.50}`, nil},
		{"array document", `[1,2]`, `[{"op":"add","path":"/-","value":3}]`, `[1,2,3]`, nil},
		{"label with slash", `{"metadata":{"labels":{"app.kubernetes.io/name":"x"}}}`, `[{"op":"remove","path":"/metadata/labels/app.kubernetes.io~1name"}]`, `{"metadata":{"labels":{}}}`, nil},
		{"traverse scalar", `{"a":1}`, `[{"op":"add","path":"/a/b","value":1}]`, "", ErrPatchConflict},
		{"failed op discards earlier ones", `{"a":1}`, `[{"op":"add","path":"/b","value":1},{"op":"test","path":"/a","value":2}]`, "", ErrPatchConflict},
		// Malformed patches.
		{"not an array", `{}`, `{"op":"add"}`, "", ErrBadPatch},
		{"not JSON", `{}`, `[{`, "", ErrBadPatch},
		{"unknown op", `{}`, `[{"op":"frobnicate","path":"/a"}]`, "", ErrBadPatch},
		{"missing op", `{}`, `[{"path":"/a"}]`, "", ErrBadPatch},
		{"missing path", `{}`, `[{"op":"add","value":1}]`, "", ErrBadPatch},
		{"missing value", `{}`, `[{"op":"add","path":"/a"}]`, "", ErrBadPatch},
		{"missing from", `{}`, `[{"op":"copy","path":"/a"}]`, "", ErrBadPatch},
		{"pointer without slash", `{}`, `[{"op":"add","path":"a","value":1}]`, "", ErrBadPatch},
		{"bad escape", `{}`, `[{"op":"add","path":"/a~2","value":1}]`, "", ErrBadPatch},
		{"move into child", `{"a":{}}`, `[{"op":"move","from":"/a","path":"/a/b"}]`, "", ErrBadPatch},
		{"operation not object", `{}`, `[1]`, "", ErrBadPatch},
		{"trailing garbage", `{}`, `[] x`, "", ErrBadPatch},
		// Bad documents.
		{"bad document", `{`, `[]`, "", ErrInvalidDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := JSONPatch([]byte(tt.doc), []byte(tt.patch))
			check(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestJSONPatchErrorMessage(t *testing.T) {
	t.Parallel()
	_, err := JSONPatch([]byte(`{"spec":{"containers":[]}}`), []byte(`[{"op":"replace","path":"/spec/template/x","value":1}]`))
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not *Error", err)
	}
	for _, want := range []string{`operation 0`, `replace "/spec/template/x"`, `"template" not found in /spec`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err.Error(), want)
		}
	}
}

func TestJSONPatchCopyLimit(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`[`)
	for i := range 40 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"op":"copy","from":"/a","path":"/a/-"}`)
	}
	b.WriteString(`]`)
	_, err := JSONPatch([]byte(`{"a":[1]}`), []byte(b.String()))
	if !errors.Is(err, ErrPatchConflict) {
		t.Fatalf("error = %v, want ErrPatchConflict", err)
	}
}

func TestJSONPatchDoesNotModifyInputs(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"a":[1,2]}`)
	p := []byte(`[{"op":"remove","path":"/a/0"}]`)
	if _, err := JSONPatch(doc, p); err != nil {
		t.Fatal(err)
	}
	if string(doc) != `{"a":[1,2]}` || string(p) != `[{"op":"remove","path":"/a/0"}]` {
		t.Fatalf("inputs modified: %s %s", doc, p)
	}
}
