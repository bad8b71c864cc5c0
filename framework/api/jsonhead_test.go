package api

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// checkDecodeHeadFields checks that DecodeHead, when it answers, says what
// DecodeMapHead's map says, read as the watch cache reads it.
func checkDecodeHeadFields(t *testing.T, in string) {
	t.Helper()
	got, ok := DecodeHead([]byte(in))
	if !ok {
		return
	}
	m, err := DecodeMapHead([]byte(in))
	if err != nil {
		t.Fatalf("%q: DecodeHead ok, DecodeMapHead: %v", in, err)
	}
	var want Head
	want.APIVersion, _ = m["apiVersion"].(string)
	meta, _ := m["metadata"].(map[string]any)
	want.Name, _ = meta["name"].(string)
	want.Namespace, _ = meta["namespace"].(string)
	want.Labels = NestedStringMap(m, "metadata", "labels")
	want.Deleting = meta["deletionTimestamp"] != nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n DecodeHead    %#v\n DecodeMapHead %#v", in, got, want)
	}
}

func TestDecodeHead(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   Head
		wantOK bool
	}{
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","uid":"u","labels":{"x":"1","y":"2"},"managedFields":[{"f":1}]},"data":{"k":"v"}}`,
			Head{APIVersion: "v1", Name: "a", Namespace: "ns", Labels: map[string]string{"x": "1", "y": "2"}}, true},
		{`{"metadata":{"name":"a","deletionTimestamp":"2026-01-01T00:00:00Z"}}`, Head{Name: "a", Deleting: true}, true},
		{`{"metadata":{"name":"a","deletionTimestamp":null}}`, Head{Name: "a"}, true},
		{`{"metadata":{"labels":{}}}`, Head{Labels: map[string]string{}}, true},
		{`{"metadata":{"labels":null}}`, Head{}, true},
		{`{"metadata":{"labels":{"a":"1","b":2,"a":true}}}`, Head{Labels: map[string]string{}}, true},
		{`{"metadata":{"name":"a"},"metadata":{"namespace":"b"}}`, Head{Namespace: "b"}, true},
		{` {"apiVersion":"v\u0031","metadata":{"n\u0061me":"é"}} `, Head{APIVersion: "v1", Name: "é"}, true},
		{`{}`, Head{}, true},
		{`{"apiVersion":1}`, Head{}, false},
		{`{"metadata":{"name":1}}`, Head{}, false},
		{`{"metadata":null}`, Head{}, false},
		{`{"metadata":{}} x`, Head{}, false},
		{`{"metadata":{"deletionTimestamp":nul}}`, Head{}, false},
		{`[]`, Head{}, false},
	} {
		got, ok := DecodeHead([]byte(tc.in))
		if ok != tc.wantOK || (ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("DecodeHead(%s) = %#v, %v; want %#v, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
		checkDecodeHeadFields(t, tc.in)
	}
}

// FuzzDecodeHead checks DecodeHead against DecodeMapHead, the fuzzer's input
// as a whole document, as metadata, labels and a field beside them.
func FuzzDecodeHead(f *testing.F) {
	for _, in := range append(slices.Clone(jsonCorpus), managedFieldsCorpus...) {
		f.Add([]byte(in))
	}
	f.Add([]byte(`{"name":"a","labels":{"a":"b"},"deletionTimestamp":"t"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		v := string(in)
		checkDecodeHeadFields(t, v)
		for _, w := range append(withManagedFields(v), asData(v)...) {
			checkDecodeHeadFields(t, w)
		}
		checkDecodeHeadFields(t, `{"apiVersion":"v1","metadata":`+v+`}`)
		checkDecodeHeadFields(t, `{"metadata":{"name":"x","labels":`+v+`}}`)
		checkDecodeHeadFields(t, `{"metadata":{"deletionTimestamp":`+v+`,"name":`+v+`}}`)
	})
}

// BenchmarkDecodeHead reads the head of a stored ConfigMap (1,000-byte value,
// one managedFields entry) with DecodeHead and with DecodeMapHead.
func BenchmarkDecodeHead(b *testing.B) {
	in := []byte(`{"apiVersion":"v1","data":{"k":"` + strings.Repeat("x", 1000) + `"},"kind":"ConfigMap","metadata":{"creationTimestamp":"2026-12-05T18:00:00Z","managedFields":[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}}},"manager":"m","operation":"Update","time":"2026-12-05T18:00:00Z"}],"name":"cm-1","namespace":"default","uid":"0b0c3a9e-2f6e-4f5b-9a57-1d1f0c1e2a3b"}}`)
	b.Run("DecodeHead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := DecodeHead(in); !ok {
				b.Fatal("not ok")
			}
		}
	})
	b.Run("DecodeMapHead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeMapHead(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
