package patch

import (
	"testing"
)

func TestMergePatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		doc     string
		patch   string
		want    string
		wantErr error
	}{
		// RFC 7386 appendix A.
		{"replace member", `{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`, nil},
		{"add member", `{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`, nil},
		{"delete member", `{"a":"b"}`, `{"a":null}`, `{}`, nil},
		{"delete one of two", `{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`, nil},
		{"array replaces", `{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`, nil},
		{"value becomes array", `{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`, nil},
		{"nested", `{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`, nil},
		{"array of objects replaces", `{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`, nil},
		{"array patch replaces doc", `["a","b"]`, `["c","d"]`, `["c","d"]`, nil},
		{"object patch on array doc", `["a","b"]`, `{"a":"b"}`, `{"a":"b"}`, nil},
		{"null in array kept", `{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`, nil},
		// Kubernetes refuses patches that are not objects or arrays (400).
		{"scalar patch", `{"a":"foo"}`, `"bar"`, "", ErrBadPatch},
		{"number patch", `{"a":"foo"}`, `1`, "", ErrBadPatch},
		{"null patch", `{"a":"foo"}`, `null`, "", ErrBadPatch},
		{"null document", `null`, `{"a":1}`, "", ErrInvalidDocument},
		{"nested nulls stripped in new object", `{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`, nil},
		// Kubernetes drops nulls from a value that lands where the document
		// has no object, at every depth, inside arrays too.
		{"nulls dropped inside arrays of a new member", `{}`, `{"a":[{"b":null,"c":1}]}`, `{"a":[{"c":1}]}`, nil},
		{"nulls dropped inside arrays replacing a scalar", `{"a":1}`, `{"a":[{"b":{"c":null}}]}`, `{"a":[{"b":{}}]}`, nil},
		{"nulls dropped inside arrays replacing an array", `{"a":[1]}`, `{"a":[[{"b":null}]]}`, `{"a":[[{}]]}`, nil},
		{"nulls dropped in object replacing null", `{"a":null}`, `{"a":{"b":null,"c":1}}`, `{"a":{"c":1}}`, nil},
		{"null elements stay", `{}`, `{"a":[null,1]}`, `{"a":[null,1]}`, nil},
		{"array replacing an object keeps nulls", `{"a":{"x":1}}`, `{"a":[{"b":null}]}`, `{"a":[{"b":null}]}`, nil},
		{"custom resource list", `{"spec":{"items":[{"name":"a"}]}}`, `{"spec":{"items":[{"name":"b","optional":null}]}}`, `{"spec":{"items":[{"name":"b"}]}}`, nil},
		{"array patch nulls dropped", `{"a":1}`, `[{"b":null},null]`, `[{},null]`, nil},
		{"object patch on array document nulls dropped", `[1]`, `{"a":{"b":null},"c":null}`, `{"a":{}}`, nil},
		// Kubernetes usage.
		{"label", `{"metadata":{"name":"x","labels":{"a":"1"}}}`, `{"metadata":{"labels":{"foo":"bar"}}}`, `{"metadata":{"name":"x","labels":{"a":"1","foo":"bar"}}}`, nil},
		{"scale", `{"spec":{"replicas":1,"x":2}}`, `{"spec":{"replicas":3}}`, `{"spec":{"replicas":3,"x":2}}`, nil},
		{"integer precision", `{"big":12345678901234567890,"f":0.10}`, `{"n":12345678901234}`, `{"big":12345678901234567890,"f":0.10,"n":12345678901234}`, nil},
		{"directives are data", `{}`, `{"$patch":"delete"}`, `{"$patch":"delete"}`, nil},
		{"bad patch", `{}`, `{"a":`, "", ErrBadPatch},
		{"bad document", `{"a":`, `{}`, "", ErrInvalidDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := MergePatch([]byte(tt.doc), []byte(tt.patch))
			check(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestCreateMergePatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		original string
		modified string
		want     string
		wantErr  error
	}{
		{"equal", `{"a":1,"b":{"c":[1,2]}}`, `{"b":{"c":[1,2]},"a":1}`, `{}`, nil},
		{"change", `{"a":1,"b":2}`, `{"a":1,"b":3}`, `{"b":3}`, nil},
		{"add", `{"a":1}`, `{"a":1,"b":{"c":1}}`, `{"b":{"c":1}}`, nil},
		{"remove", `{"a":1,"b":2}`, `{"a":1}`, `{"b":null}`, nil},
		{"nested", `{"m":{"labels":{"a":"1","b":"2"},"name":"x"}}`, `{"m":{"labels":{"a":"1","c":"3"},"name":"x"}}`, `{"m":{"labels":{"b":null,"c":"3"}}}`, nil},
		{"list replaced", `{"l":[1,2,3]}`, `{"l":[1,3]}`, `{"l":[1,3]}`, nil},
		{"object to scalar", `{"a":{"b":1}}`, `{"a":1}`, `{"a":1}`, nil},
		{"scalar to object", `{"a":1}`, `{"a":{"b":1}}`, `{"a":{"b":1}}`, nil},
		{"numbers by value", `{"a":1.0}`, `{"a":1}`, `{}`, nil},
		{"integer precision", `{"a":12345678901234567890}`, `{"a":12345678901234567891}`, `{"a":12345678901234567891}`, nil},
		{"non-object modified", `{"a":1}`, `[1]`, `[1]`, nil},
		{"bad original", `{`, `{}`, "", ErrInvalidDocument},
		{"bad modified", `{}`, `{`, "", ErrInvalidDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := CreateMergePatch([]byte(tt.original), []byte(tt.modified))
			check(t, got, err, tt.want, tt.wantErr)
			if err != nil {
				return
			}
			// Applying the patch to original must give modified.
			applied, err := MergePatch([]byte(tt.original), got)
			if err != nil {
				t.Fatalf("apply created patch: %v", err)
			}
			if a, m := mustDecode(t, applied), mustDecode(t, []byte(tt.modified)); !equal(a, m) {
				t.Fatalf("round trip: got %s, want %s", applied, tt.modified)
			}
		})
	}
}

func mustDecode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := decode(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}
