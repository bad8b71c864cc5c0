package api

import (
	"encoding/json"
	"testing"
	"time"
)

func TestUnquoteJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`""`, `"2026-01-02T03:04:05Z"`, `"a\"b"`, `"\u00e9"`, `"é"`, `"a\\b"`, `"tab	"`,
		`"x" `, ` "x"`, `"`, `x`, `1`, `null`, `"a"b"`, `["a"]`, `"\ud800"`, "\"\xff\"",
	} {
		var want string
		wantErr := json.Unmarshal([]byte(in), &want)
		got, err := unquoteJSON([]byte(in))
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("unquoteJSON(%s) = %q, %v; encoding/json: %q, %v", in, got, err, want, wantErr)
		}
	}
}

func TestTimeMarshalJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, tm := range []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC),
		time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC),
		time.Date(12345, 12, 31, 23, 59, 59, 999999999, time.FixedZone("x", 3600)),
		time.Date(-5, 6, 7, 8, 9, 10, 0, time.UTC),
	} {
		for _, c := range []struct {
			layout string
			m      json.Marshaler
		}{
			{time.RFC3339, Time{tm}},
			{"2006-01-02T15:04:05.000000Z07:00", MicroTime{tm}},
		} {
			want, _ := json.Marshal(tm.UTC().Format(c.layout))
			got, err := c.m.MarshalJSON()
			if err != nil || string(got) != string(want) {
				t.Errorf("%T(%v).MarshalJSON() = %s, %v; want %s", c.m, tm, got, err, want)
			}
		}
	}
}
