package api

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var jsonCorpus = []string{
	`{}`, ` {} `, "{\n\t\"a\" : 1 \r}", `{"a":1}}`, `{"a":1} x`, `{"a":1}{}`, `[]`, `null`, `"s"`, `1`, ``, `{`, `{"a"}`, `{"a":}`,
	`{"a":1,}`, `{,}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1e+}`,
	`{"a":-0}`, `{"a":-0.0}`, `{"a":0.5e-3}`, `{"a":1E5}`, `{"a":1e400}`, `{"a":-1e400}`, `{"a":123456789012345678}`,
	`{"a":-123456789012345678}`, `{"a":9223372036854775807}`, `{"a":-9223372036854775808}`, `{"a":9223372036854775808}`,
	`{"a":18446744073709551615}`, `{"a":1.0}`, `{"a":100000000000000000000000}`, `{"a":true,"b":false,"c":null}`,
	`{"a":tru}`, `{"a":nul}`, `{"a":True}`, `{"a":"x","a":"y"}`, `{"a":{"b":[1,"2",{"c":[]}]}}`,
	`{"a":"\""}`, `{"a":"\\"}`, `{"a":"\/"}`, `{"a":"\b\f\n\r\t"}`, `{"a":"\u00e9\u2028"}`, `{"a":"\ud83d\ude00"}`,
	`{"a":"\ud83d"}`, `{"a":"\ude00x"}`, `{"a":"\ud83d\u0041"}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`,
	"{\"a\":\"\x01\"}", "{\"a\":\"\x7f\"}", "{\"a\":\"caf\xc3\xa9\"}", "{\"a\":\"bad\xff\xfe\"}", "{\"a\":\"\xed\xa0\x80\"}",
	"{\"\xc3\xa9\":1}", "{\"a\":\"x\"\xff}", "\xef\xbb\xbf{}", `{"a":"unterminated}`, `{"a":"\`, `{"a":[`, `{"a":{`,
	`{"metadata":{"name":"x","labels":{"a":"b"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}\n"}},"data":{"k":"<&>"}}`,
	`{"a":[[[[[[[[[[]]]]]]]]]]}`, `{"a" :[ 1 , 2 ] , "b" : { } }`,
}

func checkDecode(t *testing.T, in string) {
	want, wantErr := decodeMapStd([]byte(in))
	got, ok := decodeMapFast([]byte(in))
	if !ok {
		return // DecodeMap falls back to decodeMapStd
	}
	if wantErr != nil {
		t.Fatalf("%q: fast path decoded what encoding/json refuses (%v): %#v", in, wantErr, got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: fast %#v, encoding/json %#v", in, got, want)
	}
	// And DecodeMap itself.
	if m, err := DecodeMap([]byte(in)); err != nil || !reflect.DeepEqual(m, want) {
		t.Fatalf("%q: DecodeMap %#v, %v", in, m, err)
	}
}

// checkDecodeWithout checks DecodeMapWithoutManagedFields against
// encoding/json less metadata.managedFields: the same errors, the same maps.
func checkDecodeWithout(t *testing.T, in string) {
	want, wantErr := decodeMapStd([]byte(in))
	if meta, ok := want["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	got, err := DecodeMapWithoutManagedFields([]byte(in))
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, encoding/json %v", in, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %#v, encoding/json %#v", in, got, want)
	}
}

// checkDecodeHead checks DecodeMapHead against encoding/json less
// metadata.managedFields and the root's fields but apiVersion, kind and
// metadata: the same errors, the same maps.
func checkDecodeHead(t *testing.T, in string) {
	want, wantErr := decodeMapStd([]byte(in))
	if meta, ok := want["metadata"].(map[string]any); ok {
		delete(meta, "managedFields")
	}
	for k := range want {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			delete(want, k)
		}
	}
	got, err := DecodeMapHead([]byte(in))
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, encoding/json %v", in, err, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %#v, encoding/json %#v", in, got, want)
	}
}

// asData wraps v (JSON text, valid or not) as a field beside an object's
// metadata, before it and after it.
func asData(v string) []string {
	return []string{
		`{"apiVersion":"v1","data":` + v + `,"kind":"ConfigMap","metadata":{"name":"x"}}`,
		`{"metadata":{"name":"x","labels":{"a":"b"}},"spec":` + v + `}`,
	}
}

// withManagedFields wraps v (JSON text, valid or not) as the managedFields
// of an object, and elsewhere too.
func withManagedFields(v string) []string {
	return []string{
		`{"metadata":{"name":"x","managedFields":` + v + `,"labels":{"a":"b"}},"spec":{"managedFields":1}}`,
		`{"kind":"x","metadata":{"managedFields":` + v + `}}`,
		`{"spec":{"managedFields":` + v + `},"metadata":{}}`,
	}
}

var managedFieldsCorpus = []string{
	`[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:\u003c\u2028é":{}}}},"manager":"m","operation":"Update","time":"2026-12-05T06:00:00Z"}]`,
	`[ { "a" : [ 1 , -2.5e3 , true , false , null , "\"\\\/\b\f\n\r\t\u00e9" ] } ]`,
	`[{"k:{\"port\":80}":{}}]`, `[]`, `{}`, `null`, `"x"`, `[1,]`, `[{"a"}]`, `["\q"]`, `["\u12g4"]`, "[\"\x01\"]",
	`[{"a":1}`, `[01]`, `[tru]`, "[\"bad\xff\"]",
}

func TestDecodeMapWithoutManagedFields(t *testing.T) {
	for _, in := range jsonCorpus {
		checkDecodeWithout(t, in)
		for _, w := range withManagedFields(in) {
			checkDecodeWithout(t, w)
		}
	}
	for _, v := range managedFieldsCorpus {
		for _, w := range withManagedFields(v) {
			checkDecodeWithout(t, w)
		}
	}
}

func TestDecodeMapHead(t *testing.T) {
	for _, in := range append(slices.Clone(jsonCorpus), managedFieldsCorpus...) {
		checkDecodeHead(t, in)
		for _, w := range append(withManagedFields(in), asData(in)...) {
			checkDecodeHead(t, w)
		}
	}
}

// FuzzDecodeMapWithoutManagedFields checks DecodeMapWithoutManagedFields
// against encoding/json, the fuzzer's input as a whole document and as
// managedFields.
func FuzzDecodeMapWithoutManagedFields(f *testing.F) {
	for _, in := range append(slices.Clone(jsonCorpus), managedFieldsCorpus...) {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecodeWithout(t, string(in))
		checkDecodeHead(t, string(in))
		for _, w := range withManagedFields(string(in)) {
			checkDecodeWithout(t, w)
			checkDecodeHead(t, w)
		}
		for _, w := range asData(string(in)) {
			checkDecodeHead(t, w)
		}
	})
}

func checkEncode(t *testing.T, v any) {
	want, wantErr := json.Marshal(v)
	got, err := EncodeJSON(v)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("%#v: error %v, encoding/json %v", v, err, wantErr)
	}
	if string(got) != string(want) && wantErr == nil && !(hasFieldsV1Level(v) && sameJSON(got, want)) {
		t.Fatalf("%#v:\n fast %s\n json %s", v, got, want)
	}
}

// hasFieldsV1Level reports whether v holds a map that EncodeJSON writes in
// managedFields' FieldsV1 order rather than encoding/json's.
func hasFieldsV1Level(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k, e := range t {
			if hasFieldsV1Level(e) {
				return true
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return isFieldsV1Level(keys)
	case []any:
		for _, e := range t {
			if hasFieldsV1Level(e) {
				return true
			}
		}
	}
	return false
}

// sameJSON reports whether a and b decode to the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func TestDecodeMapFastMatchesEncodingJSON(t *testing.T) {
	for _, in := range jsonCorpus {
		checkDecode(t, in)
	}
	deep := strings.Repeat(`{"a":`, 1200) + "1" + strings.Repeat("}", 1200)
	checkDecode(t, deep)
	if _, err := DecodeMap([]byte(deep)); err != nil {
		t.Fatalf("deep object: %v", err)
	}
	// Sanity: the fast path does take the common case.
	if _, ok := decodeMapFast([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`)); !ok {
		t.Fatal("the fast path refused a plain object")
	}
}

func TestEncodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, in := range jsonCorpus {
		if m, err := decodeMapStd([]byte(in)); err == nil {
			checkEncode(t, m)
		}
	}
	type named string
	for _, v := range []any{
		nil, map[string]any(nil), []any(nil), map[string]any{}, []any{}, "", "a<b>&c", "é", "\u2028", "bad\xff", "\x00\x1f\"\\/",
		int64(-5), 3, int32(7), uint64(math.MaxUint64), 1.5, 1e21, 1e20, 1e-6, 1e-7, -1e-7, 123456789.125, math.SmallestNonzeroFloat64,
		math.MaxFloat64, 0.0, math.Copysign(0, -1), math.Inf(1), math.NaN(), true, false, json.Number("12"), named("x"),
		map[string]string{"b": "1", "a": "2"}, []string{"x"}, map[string]any{"f": func() {}},
		map[string]any{"z": 1, "a": []any{map[string]any{"y": nil, "b": "<"}}, "A": 1.25, "é": "ü", "\u2028k": 1, "": 0},
		Time{}, map[string]any{"t": Time{}},
	} {
		checkEncode(t, v)
	}
}

func FuzzDecodeMapFast(f *testing.F) {
	for _, in := range jsonCorpus {
		f.Add([]byte(in))
	}
	f.Add([]byte(`{"f:x":{".":{},"i:10":{},"i:9":{},"k:{\"a\":443}":{},"k:{\"a\":80}":{}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		checkDecode(t, string(in))
		if m, err := decodeMapStd(in); err == nil {
			checkEncode(t, m)
		}
	})
}

// FuzzDecodeValue checks DecodeValue against encoding/json (decodeValueStd).
func FuzzDecodeValue(f *testing.F) {
	for _, in := range jsonCorpus {
		f.Add([]byte(in))
	}
	for _, in := range []string{`"x"`, `1`, `-0`, `1.5e3`, `null`, `true`, `[1,"a",{}]`, ` "2026-01-02T03:04:05Z" `, `1 2`, `"a" }`, `99999999999999999999`} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := DecodeValue(in)
		want, wantErr := decodeValueStd(in)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("DecodeValue(%q) error %v, encoding/json: %v", in, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeValue(%q) = %#v, encoding/json: %#v", in, got, want)
		}
	})
}

// DecodeMap accepts one object and whitespace only, whichever path decodes.
func TestDecodeMapRejectsTrailingData(t *testing.T) {
	for _, in := range []string{`{"a":1}}`, `{"a":1}]`, `{"a":1}{"b":2}`, `{"a":1},"x":2`, `{"a":1} x`} {
		if m, err := DecodeMap([]byte(in)); err == nil {
			t.Errorf("DecodeMap(%s) = %v, want an error", in, m)
		}
	}
	if _, err := DecodeMap([]byte(" {\"a\":1} \n")); err != nil {
		t.Errorf("surrounding whitespace: %v", err)
	}
}
