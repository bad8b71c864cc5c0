package api

import (
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDuplicateFields(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"none", `{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, nil},
		{"top level", `{"a":1,"a":2}`, []string{"a"}},
		{"nested, after unknown", `{"spec":{"unknownField":"foo","replicas":2,"replicas":3,"template":{"x":1}}}`, []string{"spec.replicas"}},
		{"in arrays", `{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}]}}`, []string{"spec.containers[1].name"}},
		{"three times", `{"a":1,"a":2,"a":3}`, []string{"a", "a"}},
		{"escaped key", `{"a":1,"\u0061":2}`, []string{"a"}},
		{"siblings do not share keys", `{"x":{"k":1},"y":{"k":1},"z":{"k":{"k":1}}}`, nil},
		{"strings with braces and escapes", `{"a":"}\"{","b":"a","a":"x"}`, []string{"a"}},
		{"top-level array", `[{"a":1,"a":1}]`, []string{"[0].a"}},
		{"malformed", `{"a":1,"a"`, []string{"a"}},
		{"truncated string", `{"a`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, DuplicateFields([]byte(tc.in))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzDuplicateFields(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":2,"b":3}],"a":null}`))
	f.Fuzz(func(_ *testing.T, data []byte) { DuplicateFields(data) })
}

func BenchmarkDuplicateFields(b *testing.B) {
	body := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default","labels":{"app":"web","tier":"front"}},
		"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":80}],"resources":{"requests":{"cpu":"100m"}}}]}}`)
	b.ReportAllocs()
	for b.Loop() {
		DuplicateFields(body)
	}
}

// checkDecodeUnique checks DecodeMapUnique against DecodeMap (the same map,
// the same error) and DuplicateFields (unique only when it finds none).
func checkDecodeUnique(t *testing.T, in string) {
	m, unique, err := DecodeMapUnique([]byte(in))
	want, wantErr := DecodeMap([]byte(in))
	if (err == nil) != (wantErr == nil) || !reflect.DeepEqual(m, want) {
		t.Fatalf("%q: %#v, %v; DecodeMap %#v, %v", in, m, err, want, wantErr)
	}
	if dups := DuplicateFields([]byte(in)); unique && len(dups) > 0 {
		t.Fatalf("%q: unique, DuplicateFields %q", in, dups)
	}
}

func TestDecodeMapUnique(t *testing.T) {
	for _, in := range append(slices.Clone(jsonCorpus), `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"x":{"k":1},"y":{"k":1}}`,
		`{"spec":{"containers":[{"name":"a"},{"name":"b","name":"c"}]}}`, `{"a":{"b":1,"b":{}}}`) {
		checkDecodeUnique(t, in)
	}
	for in, want := range map[string]bool{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`: true, `{"a":[{"b":1,"b":2}]}`: false, `{"a":1,"a":1}`: false} {
		if _, unique, err := DecodeMapUnique([]byte(in)); err != nil || unique != want {
			t.Errorf("%s: unique %v, %v; want %v", in, unique, err, want)
		}
	}
}

func FuzzDecodeMapUnique(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":2,"b":3}],"a":null}`))
	f.Add([]byte(`{"a":{"b":1},"c":"\u0061"}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkDecodeUnique(t, string(data)) })
}
