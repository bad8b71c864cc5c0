package patch

import (
	"reflect"
	"testing"
)

func TestEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`-0`, `0`, true},
		{`12345678901234567890`, `12345678901234567891`, false},
		{`12345678901234567890`, `12345678901234567890`, true},
		{`0.1`, `0.10`, true},
		{`1`, `"1"`, false},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`null`, `null`, true},
		{`null`, `false`, false},
		{`[1,{"a":2}]`, `[1.0,{"a":2}]`, true},
		{`[1]`, `[1,2]`, false},
		{`{"a":1}`, `{"b":1}`, false},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.a+"="+tt.b, func(t *testing.T) {
			t.Parallel()
			a, b := mustDecode(t, []byte(tt.a)), mustDecode(t, []byte(tt.b))
			if got := equal(a, b); got != tt.want {
				t.Errorf("equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			ka, oka := scalarKey(a)
			kb, okb := scalarKey(b)
			if oka && okb && (ka == kb) != tt.want {
				t.Errorf("scalarKey(%s)=%q, scalarKey(%s)=%q disagree with equal", tt.a, ka, tt.b, kb)
			}
		})
	}
}

func TestStrategicMergePatchPrimitiveUnion(t *testing.T) {
	t.Parallel()
	type obj struct {
		Values []any `json:"values" patchStrategy:"merge"`
	}
	got, err := StrategicMergePatch([]byte(`{"values":[1,"a",true,null,[1]]}`), []byte(`{"values":[1.0,"a","b",false,true,null,[1],[2]]}`), reflect.TypeFor[obj]())
	// Every value is in the patch, so the patch's order wins.
	check(t, got, err, `{"values":[1,"a","b",false,true,null,[1],[2]]}`, nil)
}
