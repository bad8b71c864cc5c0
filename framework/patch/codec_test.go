package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// refDecode is what decode replaced: encoding/json with UseNumber.
func refDecode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	for _, c := range data[dec.InputOffset():] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return nil, errors.New("unexpected data after the JSON value")
		}
	}
	return v, nil
}

// refEncode is what encode replaced: encoding/json without HTML escaping.
func refEncode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// checkCodec fails t when decode or encode differ from encoding/json on data.
func checkCodec(t *testing.T, data []byte) {
	t.Helper()
	got, err := decode(data)
	want, refErr := refDecode(data)
	if (err == nil) != (refErr == nil) {
		t.Fatalf("decode %q: error %v, encoding/json %v", data, err, refErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decode %q: %#v, encoding/json %#v", data, got, want)
	}
	out, err := encode(got)
	refOut, refErr := refEncode(got)
	if err != nil || refErr != nil || !bytes.Equal(out, refOut) {
		t.Fatalf("encode %#v: %q (%v), encoding/json %q (%v)", got, out, err, refOut, refErr)
	}
}

var codecCases = []string{
	``, ` `, `null`, `true`, `false`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `1E+2`, `-1.5e-3`,
	`12345678901234567890123`, `+1`, `1 2`, ` {"a" : [1 , 2] } `, `{"a":1,}`, `[1,]`, `[,]`, `{,}`, `{"a"}`,
	`{"a":1 "b":2}`, `{"a":1,"a":2}`, `[]`, `{}`, `[[[]]]`, `"\u0041\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`,
	`"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\uZZZZ"`, `"\x"`, "\"a\x01\"", "\"\xff\"",
	"\"a\xe2\x80\xa8b\u2029\"", `"<&>"`, "\"\x7f\"", "\xef\xbb\xbf{}", `{"k":"v"}garbage`, "\"\xed\xa0\x80\"",
	`"unterminated`, `["a",{"b":null,"c":[true,false,1.0]}]`, `{"":""}`, "\t\n\r[1]\r\n",
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

func TestCodecMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, c := range codecCases {
		checkCodec(t, []byte(c))
	}
}
