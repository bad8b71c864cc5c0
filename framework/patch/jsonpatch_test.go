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
		// Kubernetes compares scalars by their JSON text.
		{"test number as written", `{"n":1}`, `[{"op":"test","path":"/n","value":1}]`, `{"n":1}`, nil},
		{"test number written differently", `{"n":1}`, `[{"op":"test","path":"/n","value":1.0}]`, "", ErrPatchConflict},
		{"test string written differently", `{"s":"A"}`, `[{"op":"test","path":"/s","value":"\u0041"}]`, "", ErrPatchConflict},
		{"test string written the same", `{"s":"\u0041"}`, `[{"op":"test","path":"/s","value":"\u0041"}]`, `{"s":"A"}`, nil},
		{"test HTML character as encoding/json writes it", `{"s":"\u003c"}`, `[{"op":"test","path":"/s","value":"\u003c"}]`, `{"s":"<"}`, nil},
		{"test HTML character unescaped", `{"s":"\u003c"}`, `[{"op":"test","path":"/s","value":"<"}]`, "", ErrPatchConflict},
		{"test string added by the patch", `{}`, `[{"op":"add","path":"/s","value":"<"},{"op":"test","path":"/s","value":"<"}]`, `{"s":"<"}`, nil},
		{"test string copied escapes HTML", `{}`, `[{"op":"add","path":"/s","value":"<"},{"op":"copy","from":"/s","path":"/t"},{"op":"test","path":"/t","value":"\u003c"}]`, `{"s":"<","t":"<"}`, nil},
		{"test string copied keeps other escapes", `{}`, `[{"op":"add","path":"/s","value":"\u0041"},{"op":"copy","from":"/s","path":"/t"},{"op":"test","path":"/t","value":"A"}]`, "", ErrPatchConflict},
		{"escaped op and path", `{}`, `[{"op":"\u0061dd","path":"\/a","value":1}]`, `{"a":1}`, nil},
		// Further cases.
		{"copy", `{"a":{"b":[1]}}`, `[{"op":"copy","from":"/a","path":"/c"},{"op":"add","path":"/c/b/-","value":2}]`, `{"a":{"b":[1]},"c":{"b":[1,2]}}`, nil},
		{"insert at end index", `{"a":[1,2]}`, `[{"op":"add","path":"/a/2","value":3}]`, `{"a":[1,2,3]}`, nil},
		{"insert at front", `{"a":[1,2]}`, `[{"op":"add","path":"/a/0","value":0}]`, `{"a":[0,1,2]}`, nil},
		{"insert past end", `{"a":[1,2]}`, `[{"op":"add","path":"/a/3","value":3}]`, "", ErrPatchConflict},
		{"leading zero index", `{"a":[1,2]}`, `[{"op":"replace","path":"/a/01","value":3}]`, `{"a":[1,3]}`, nil},
		{"remove missing", `{"a":1}`, `[{"op":"remove","path":"/b"}]`, "", ErrPatchConflict},
		{"replace missing", `{"a":1}`, `[{"op":"replace","path":"/b","value":2}]`, `{"a":1,"b":2}`, nil},
		{"remove dash", `{"a":[1]}`, `[{"op":"remove","path":"/a/-"}]`, "", ErrPatchConflict},
		{"replace root", `{"a":1}`, `[{"op":"replace","path":"","value":[1]}]`, `[1]`, nil},
		{"add root", `{"a":1}`, `[{"op":"add","path":"","value":{"b":2}}]`, "", ErrPatchConflict},
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
		{"operation null", `{}`, `[null]`, "", ErrPatchConflict},
		{"patch null", `{"a":1}`, `null`, `{"a":1}`, nil},
		// Operations Kubernetes decodes and then fails to apply: 422, not 400.
		{"unknown op", `{}`, `[{"op":"frobnicate","path":"/a"}]`, "", ErrPatchConflict},
		{"missing op", `{}`, `[{"path":"/a"}]`, "", ErrPatchConflict},
		{"op not a string", `{}`, `[{"op":1,"path":"/a"}]`, "", ErrPatchConflict},
		{"missing path", `{}`, `[{"op":"add","value":1}]`, "", ErrPatchConflict},
		{"path not a string", `{}`, `[{"op":"add","path":1,"value":1}]`, "", ErrPatchConflict},
		{"missing from", `{}`, `[{"op":"copy","path":"/a"}]`, "", ErrPatchConflict},
		{"pointer without slash", `{}`, `[{"op":"add","path":"a","value":1}]`, "", ErrPatchConflict},
		{"move into child", `{"a":{}}`, `[{"op":"move","from":"/a","path":"/a/b"}]`, "", ErrPatchConflict},
		// Kubernetes' quirks (gopkg.in/evanphx/json-patch.v4 as the API server configures it).
		{"missing value adds null", `{}`, `[{"op":"add","path":"/a"}]`, `{"a":null}`, nil},
		{"missing value replaces with null", `{"a":1}`, `[{"op":"replace","path":"/a"}]`, `{"a":null}`, nil},
		{"tilde kept literally", `{}`, `[{"op":"add","path":"/a~2","value":1}]`, `{"a~2":1}`, nil},
		{"trailing tilde kept", `{}`, `[{"op":"add","path":"/a~","value":1}]`, `{"a~":1}`, nil},
		{"first segment ignored without leading slash", `{"a":{}}`, `[{"op":"add","path":"x/a/b","value":1}]`, `{"a":{"b":1}}`, nil},
		{"empty token", `{}`, `[{"op":"add","path":"/","value":1}]`, `{"":1}`, nil},
		{"replace missing nested", `{"a":{}}`, `[{"op":"replace","path":"/a/b","value":1}]`, `{"a":{"b":1}}`, nil},
		{"replace missing parent", `{"a":1}`, `[{"op":"replace","path":"/x/b","value":1}]`, "", ErrPatchConflict},
		{"replace root with scalar", `{"a":1}`, `[{"op":"replace","path":"","value":1}]`, "", ErrPatchConflict},
		{"replace root with null", `{"a":1}`, `[{"op":"replace","path":"","value":null}]`, "", ErrPatchConflict},
		{"replace past the end", `{"a":[1]}`, `[{"op":"replace","path":"/a/1","value":2}]`, "", ErrPatchConflict},
		{"remove missing in array", `{"a":[1]}`, `[{"op":"remove","path":"/a/1"}]`, "", ErrPatchConflict},
		{"copy missing member adds null", `{"a":1}`, `[{"op":"copy","from":"/b","path":"/c"}]`, `{"a":1,"c":null}`, nil},
		{"copy missing element fails", `{"a":[]}`, `[{"op":"copy","from":"/a/0","path":"/c"}]`, "", ErrPatchConflict},
		{"copy from missing parent fails", `{"a":1}`, `[{"op":"copy","from":"/x/y","path":"/c"}]`, "", ErrPatchConflict},
		{"copy root fails", `{"a":1}`, `[{"op":"copy","from":"","path":"/c"}]`, "", ErrPatchConflict},
		{"move root fails", `{"a":1}`, `[{"op":"move","from":"","path":"/c"}]`, "", ErrPatchConflict},
		{"move missing to same path", `{"a":1}`, `[{"op":"move","from":"/b","path":"/b"}]`, "", ErrPatchConflict},
		{"move within array", `{"a":[1,2,3]}`, `[{"op":"move","from":"/a/0","path":"/a/-"}]`, `{"a":[2,3,1]}`, nil},
		{"test missing with null", `{"a":1}`, `[{"op":"test","path":"/b","value":null}]`, `{"a":1}`, nil},
		{"test missing without value", `{"a":1}`, `[{"op":"test","path":"/b"}]`, `{"a":1}`, nil},
		{"test missing with value", `{"a":1}`, `[{"op":"test","path":"/b","value":1}]`, "", ErrPatchConflict},
		{"test null member", `{"a":null}`, `[{"op":"test","path":"/a","value":null}]`, `{"a":null}`, nil},
		{"test null member against value", `{"a":null}`, `[{"op":"test","path":"/a","value":0}]`, "", ErrPatchConflict},
		{"test value without value", `{"a":1}`, `[{"op":"test","path":"/a"}]`, "", ErrPatchConflict},
		{"test added null", `{}`, `[{"op":"add","path":"/a","value":null},{"op":"test","path":"/a","value":null}]`, `{"a":null}`, nil},
		{"test added null without value", `{}`, `[{"op":"add","path":"/a","value":null},{"op":"test","path":"/a"}]`, "", ErrPatchConflict},
		{"test added null inside object", `{"o":{}}`, `[{"op":"add","path":"/o/a","value":null},{"op":"test","path":"/o","value":{"a":null}}]`, "", ErrPatchConflict},
		{"test null inside object", `{"o":{"a":null}}`, `[{"op":"test","path":"/o","value":{"a":null}}]`, `{"o":{"a":null}}`, nil},
		{"test null inside array", `{"a":[null]}`, `[{"op":"test","path":"/a","value":[null]}]`, "", ErrPatchConflict},
		{"test array", `{"a":[1,{"b":"c"}]}`, `[{"op":"test","path":"/a","value":[1,{"b":"c"}]}]`, `{"a":[1,{"b":"c"}]}`, nil},
		{"test object keys", `{"a":{"b":1}}`, `[{"op":"test","path":"/a","value":{"b":1,"c":2}}]`, "", ErrPatchConflict},
		{"test root", `{"a":1}`, `[{"op":"test","path":"","value":{"a":1}}]`, `{"a":1}`, nil},
		{"test root differs", `{"a":1}`, `[{"op":"test","path":"","value":{"a":2}}]`, "", ErrPatchConflict},
		{"test string vs object", `{"a":"x"}`, `[{"op":"test","path":"/a","value":{}}]`, "", ErrPatchConflict},
		{"copied added null reads as empty object", `{}`, `[{"op":"add","path":"/a","value":null},{"op":"copy","from":"/a","path":"/b"},{"op":"test","path":"/b","value":{}},{"op":"test","path":"/b/x","value":null}]`, `{"a":null,"b":null}`, nil},
		{"copied added null takes no member", `{}`, `[{"op":"add","path":"/a","value":null},{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/b/x","value":1}]`, "", ErrPatchConflict},
		{"traverse added null fails", `{}`, `[{"op":"add","path":"/a","value":null},{"op":"test","path":"/a/x","value":null}]`, "", ErrPatchConflict},
		{"traverse null fails", `{"a":null}`, `[{"op":"add","path":"/a/x","value":1}]`, "", ErrPatchConflict},
		// Array indexes as Kubernetes reads them.
		{"negative index get", `{"a":[1,2,3]}`, `[{"op":"test","path":"/a/-1","value":3}]`, `{"a":[1,2,3]}`, nil},
		{"negative index replace", `{"a":[1,2,3]}`, `[{"op":"replace","path":"/a/-3","value":0}]`, `{"a":[0,2,3]}`, nil},
		{"negative index too small", `{"a":[1,2,3]}`, `[{"op":"replace","path":"/a/-4","value":0}]`, "", ErrPatchConflict},
		{"negative index add appends", `{"a":[1,2]}`, `[{"op":"add","path":"/a/-1","value":3}]`, `{"a":[1,2,3]}`, nil},
		{"negative index add first", `{"a":[1,2]}`, `[{"op":"add","path":"/a/-3","value":0}]`, `{"a":[0,1,2]}`, nil},
		{"negative index add too small", `{"a":[1,2]}`, `[{"op":"add","path":"/a/-4","value":0}]`, "", ErrPatchConflict},
		{"negative index remove", `{"a":[1,2]}`, `[{"op":"remove","path":"/a/-1"}]`, `{"a":[1]}`, nil},
		{"negative index traverse", `{"a":[{"b":1}]}`, `[{"op":"replace","path":"/a/-1/b","value":2}]`, `{"a":[{"b":2}]}`, nil},
		{"plus sign index", `{"a":[1,2]}`, `[{"op":"remove","path":"/a/+1"}]`, `{"a":[1]}`, nil},
		{"dash for add only", `{"a":[1]}`, `[{"op":"test","path":"/a/-","value":1}]`, "", ErrPatchConflict},
		{"index not a number", `{"a":[1]}`, `[{"op":"add","path":"/a/x","value":1}]`, "", ErrPatchConflict},
		{"array root needs bracket first", ` [1]`, `[]`, "", ErrInvalidDocument},
		{"scalar document", `1`, `[]`, "", ErrInvalidDocument},
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
	// The API server returns these messages to clients; they are the library's.
	tests := []struct{ doc, patch, want string }{
		{`{"spec":{}}`, `[{"op":"replace","path":"/spec/template/x","value":1}]`, `replace operation does not apply: doc is missing path: /spec/template/x: missing value`},
		{`{"a":1}`, `[{"op":"remove","path":"/b"}]`, `error in remove for path: '/b': Unable to remove nonexistent key: b: missing value`},
		{`{"a":[1]}`, `[{"op":"add","path":"/a/5","value":1}]`, `error in add for path: '/a/5': Unable to access invalid index: 5: invalid index referenced`},
		{`{"a":1}`, `[{"op":"test","path":"/a","value":2}]`, `testing value /a failed: test failed`},
		{`{}`, `[{"op":"frobnicate","path":"/a"}]`, `Unexpected kind: frobnicate`},
		{`{}`, `[{"op":"add","path":"/a/b","value":1}]`, `add operation does not apply: doc is missing path: "/a/b": missing value`},
	}
	for _, tt := range tests {
		_, err := JSONPatch([]byte(tt.doc), []byte(tt.patch))
		var pe *Error
		if !errors.As(err, &pe) || !errors.Is(err, ErrPatchConflict) {
			t.Fatalf("%s: error %v is not a conflict *Error", tt.patch, err)
		}
		if err.Error() != tt.want {
			t.Errorf("%s: message %q, want %q", tt.patch, err.Error(), tt.want)
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
