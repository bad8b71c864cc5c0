package registry

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

type fastInner struct {
	Name   string            `json:"name"`
	Port   *int32            `json:"port,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

type fastEmbedded struct {
	Shared string `json:"shared,omitempty"`
	hidden string
}

type fastAlias string

type fastNamedMap map[fastAlias]int

type fastSpec struct {
	fastEmbedded
	Size      int64                      `json:"size"`
	Small     int8                       `json:"small,omitempty"`
	Count     uint16                     `json:"count,omitempty"`
	Ratio     float64                    `json:"ratio,omitempty"`
	Weight    float32                    `json:"weight,omitempty"`
	On        bool                       `json:"on"`
	Maybe     *bool                      `json:"maybe,omitempty"`
	Tags      map[string]string          `json:"tags,omitempty"`
	Parts     []fastInner                `json:"parts,omitempty"`
	PartPtrs  []*fastInner               `json:"partPtrs,omitempty"`
	ByName    map[string]fastInner       `json:"byName,omitempty"`
	ByNamePtr map[string]*fastInner      `json:"byNamePtr,omitempty"`
	Named     fastNamedMap               `json:"named,omitempty"`
	Alias     fastAlias                  `json:"alias,omitempty"`
	Any       any                        `json:"any,omitempty"`
	Anys      []any                      `json:"anys"`
	AnyMap    map[string]any             `json:"anyMap,omitempty"`
	Raw       json.RawMessage            `json:"raw,omitempty"`
	RawMap    map[string]json.RawMessage `json:"rawMap,omitempty"`
	Bytes     []byte                     `json:"bytes,omitempty"`
	Quantity  api.Quantity               `json:"quantity,omitempty"`
	QPtr      *api.Quantity              `json:"qPtr,omitempty"`
	Port      api.IntOrString            `json:"port,omitempty"`
	When      api.Time                   `json:"when,omitempty"`
	WhenPtr   *api.Time                  `json:"whenPtr,omitempty"`
	Ext       api.RawExtension           `json:"ext,omitempty"`
	Strs      []string                   `json:"strs"`
	Nested    [][]int                    `json:"nested,omitempty"`
	Arr       *[2]int                    `json:"arr,omitempty"`
	Inner     fastInner                  `json:"inner"`
	InnerPtr  *fastInner                 `json:"innerPtr,omitempty"`
	Untagged  string
	Skipped   string      `json:"-"`
	Dash      string      `json:"-,"`
	Dollar    string      `json:"$ref,omitempty"`
	Number    json.Number `json:"number,omitempty"`
	Uint64    uint64      `json:"uint64,omitempty"`
}

type fastObject struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           fastSpec  `json:"spec"`
	Status         *fastSpec `json:"status,omitempty"`
}

var fastCorpus = []string{
	`{"apiVersion":"v1","kind":"Fast","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"a":"b"},"generation":1}}`,
	`{"metadata":{"name":"a","annotations":{"k":"v"},"ownerReferences":[{"apiVersion":"v1","kind":"X","name":"o","uid":"1","controller":true}]},"spec":{"size":3,"on":true,"tags":{"x":"y"},"parts":[{"name":"p","port":80}],"any":{"a":[1,2.5,"x",null,true]},"anys":[1,{"b":2}],"raw":{"z":1},"bytes":"aGVsbG8=","quantity":"100m","port":"http","when":"2026-01-02T03:04:05Z","strs":["a"],"nested":[[1,2],[]]}}`,
	`{"spec":{"size":-9223372036854775808,"small":127,"count":65535,"ratio":1.5,"maybe":false,"byName":{"a":{"name":"b","labels":{}}},"byNamePtr":{"a":null,"b":{"name":"c"}},"named":{"x":1},"alias":"al","qPtr":"1Gi","whenPtr":null,"ext":{"k":[1]},"inner":{"name":"i"},"innerPtr":{"name":"j"},"Untagged":"u","-":"d","$ref":"r"}}`,
	`{"spec":{"size":1.5}}`,
	`{"spec":{"small":128}}`,
	`{"spec":{"count":-1}}`,
	`{"spec":{"weight":1.1}}`,
	`{"spec":{"arr":[1,2]}}`,
	`{"spec":{"number":12}}`,
	`{"spec":{"size":null,"on":null,"tags":null,"parts":null,"inner":null,"innerPtr":null,"raw":null,"any":null,"when":null,"quantity":null}}`,
	`{"spec":{"bytes":"!!"}}`,
	`{"spec":{"bytes":[1,2,300]}}`,
	`{"spec":{"bytes":[1,2,3]}}`,
	`{"spec":{"when":"yesterday"}}`,
	`{"spec":{"tags":{"a":1}}}`,
	`{"spec":{"parts":{"a":1}}}`,
	`{"spec":{"inner":"x"}}`,
	`{"spec":{"ratio":1e300,"uint64":18446744073709551615}}`,
	`{"spec":{"ratio":100000000000000000000,"anys":[1e21,-0,0.000001,1e-7]}}`,
	`{"spec":{"strs":["\u00e9\u2028<&>"],"tags":{"\u00e9":"\ud800"}}}`,
	`{"spec":{"fastEmbedded":{"shared":"x"},"shared":"y"}}`,
	`{"spec":{"rawMap":{"a":null,"b":[1]}}}`,
	`{"status":{"size":2},"spec":{}}`,
	`{"metadata":{"creationTimestamp":null,"deletionGracePeriodSeconds":30,"finalizers":[]}}`,
	`{"spec":{"ratio":70000000000001100,"anys":[9007199254740993,-9007199254740992]}}`,
	`{"spec":{"ext":"a\"b","raw":"x\u2028y","rawMap":{"a":"\u0001","b":"plain"},"port":"h\ttp","quantity":"0.1","qPtr":"100m","when":"2026-01-02T03:04:05+01:00","whenPtr":"2026-01-02T03:04:05Z"}}`,
	`{"spec":{"ext":"plain","raw":"caf\u00e9","port":80,"quantity":"1e3","when":"2026-01-02T03:04:05.5Z"}}`,
}

// FuzzCanonicalizeTypedFast checks that Typed.CanonicalizeTyped's fast path
// (decodeFast, encodeFast) gives what its JSON round trip gives.
func FuzzCanonicalizeTypedFast(f *testing.F) {
	for _, in := range fastCorpus {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		obj, err := api.DecodeMap(in)
		if err != nil {
			return
		}
		checkCanonicalizeFast(t, obj)
	})
}

func TestCanonicalizeTypedFastMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, in := range fastCorpus {
		obj, err := api.DecodeMap([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		checkCanonicalizeFast(t, obj)
	}
	// Values no decoder produces, as admission plugins may leave them.
	for _, obj := range []map[string]any{
		{"spec": map[string]any{"size": 3}},
		{"spec": map[string]any{"ratio": float64(3)}},
		{"spec": map[string]any{"strs": []string{"a"}}},
		{"spec": map[string]any{"tags": map[string]any{"a": "\xff"}}},
		{"spec": map[string]any{"any": map[string]any{"a": int64(1) << 60}}},
	} {
		checkCanonicalizeFast(t, obj)
	}
}

func checkCanonicalizeFast(t *testing.T, obj map[string]any) {
	t.Helper()
	s := Typed[fastObject]{Default: func(o *fastObject) {
		if o.Spec.Size == 0 {
			o.Spec.Size = 7
		}
		if o.Spec.Ratio == 0.25 {
			o.Spec.Ratio = 2 // an integral float: an int64 in the map
		}
	}}
	in := api.DeepCopyJSON(obj)
	unknown := UnknownFields(obj, reflect.TypeFor[fastObject]())
	var want, got canonResult
	want.out, want.dec, want.unknown, want.errs = s.canonicalizeJSON(api.DeepCopyJSON(obj), unknown)
	got.out, got.dec, got.unknown, got.errs = s.CanonicalizeTyped(obj)
	if diff := cmp.Diff(in, obj); diff != "" {
		t.Fatalf("CanonicalizeTyped changed its input (-before +after):\n%s", diff)
	}
	diffCanonical(t, obj, "json", "fast", want, got)
	if want.dec.Value != nil {
		// encodeFast on its own, when it takes the value, is ToMap.
		v := reflect.ValueOf(want.dec.Value)
		if enc, ok := encodeFast(v.Elem(), planOf(v.Elem().Type()), 0); ok {
			m, err := ToMap(want.dec.Value)
			if err != nil {
				t.Errorf("%v: encodeFast took a value ToMap fails on: %v", obj, err)
			} else if diff := cmp.Diff(any(m), enc); diff != "" {
				t.Errorf("%v: encodeFast (-ToMap +fast):\n%s", obj, diff)
			}
		}
	}
	checkCanonicalizeOwned(t, s, obj)
}

// canonResult is what CanonicalizeTyped returns.
type canonResult struct {
	out     map[string]any
	dec     Decoded
	unknown []string
	errs    field.ErrorList
}

// diffCanonical reports where two canonicalizations of obj differ: in values
// (and their Go types), unknown fields, errors, the typed value, or the bytes
// of the encoded output.
func diffCanonical(t *testing.T, obj map[string]any, wantName, gotName string, want, got canonResult) {
	t.Helper()
	if diff := cmp.Diff(want.out, got.out); diff != "" {
		t.Errorf("%v: out (-%s +%s):\n%s", obj, wantName, gotName, diff)
	}
	if diff := cmp.Diff(want.unknown, got.unknown); diff != "" {
		t.Errorf("%v: unknown (-%s +%s):\n%s", obj, wantName, gotName, diff)
	}
	if w, g := errText(want.errs), errText(got.errs); w != g {
		t.Errorf("%v: errors: %s %q, %s %q", obj, wantName, w, gotName, g)
	}
	if !reflect.DeepEqual(want.dec.Value, got.dec.Value) || (want.dec.Meta == nil) != (got.dec.Meta == nil) {
		t.Errorf("%v: decoded value differs:\n%s %+v\n%s %+v", obj, wantName, want.dec, gotName, got.dec)
	}
	wb, werr := api.EncodeJSON(want.out)
	gb, gerr := api.EncodeJSON(got.out)
	if string(wb) != string(gb) || (werr == nil) != (gerr == nil) {
		t.Errorf("%v: encoded out: %s %s (%v), %s %s (%v)", obj, wantName, wb, werr, gotName, gb, gerr)
	}
}

// checkCanonicalizeOwned checks that CanonicalizeOwned gives what
// CanonicalizeTyped gives, values of the same Go types, byte for byte once
// encoded, for a copy of obj.
func checkCanonicalizeOwned[T any](t *testing.T, s Typed[T], obj map[string]any) {
	t.Helper()
	var want, got canonResult
	want.out, want.dec, want.unknown, want.errs = s.CanonicalizeTyped(api.DeepCopyJSON(obj))
	got.out, got.dec, got.unknown, got.errs = s.CanonicalizeOwned(api.DeepCopyJSON(obj))
	diffCanonical(t, obj, "typed", "owned", want, got)
}

func errText(l field.ErrorList) string {
	if err := l.ToError(); err != nil {
		return err.Error()
	}
	return ""
}

// TestCanonicalizeOwnedReuses checks that CanonicalizeOwned of an object that
// is canonical already returns it, and that one with defaults applied shares
// the parts defaulting left alone.
func TestCanonicalizeOwnedReuses(t *testing.T) {
	t.Parallel()
	in := `{"apiVersion":"v1","kind":"Fast","metadata":{"name":"a","namespace":"ns","uid":"u","creationTimestamp":"2026-01-02T03:04:05Z","labels":{"a":"b"},"generation":1},` +
		`"spec":{"size":3,"on":true,"tags":{"x":"y"},"parts":[{"name":"p","port":80}],"any":{"a":[1,2.5,"x",null,true]},"anys":[1,{"b":2}],"quantity":"100m","strs":["a"],"inner":{"name":"i"}}}`
	obj, err := api.DecodeMap([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	canon, _, _, errs := Typed[fastObject]{}.CanonicalizeTyped(obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := api.EncodeJSON(canon)
	if err != nil {
		t.Fatal(err)
	}
	if obj, err = api.DecodeMap(b); err != nil {
		t.Fatal(err)
	}
	checkCanonicalizeOwned(t, Typed[fastObject]{}, obj)
	out, _, _, errs := Typed[fastObject]{}.CanonicalizeOwned(obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if reflect.ValueOf(out).UnsafePointer() != reflect.ValueOf(obj).UnsafePointer() {
		t.Errorf("a canonical object was copied")
	}

	if obj, err = api.DecodeMap(b); err != nil {
		t.Fatal(err)
	}
	spec := obj["spec"].(map[string]any)
	meta, parts := obj["metadata"], spec["parts"]
	s := Typed[fastObject]{Default: func(o *fastObject) { o.Spec.Size = 7 }}
	checkCanonicalizeOwned(t, s, obj)
	out, _, _, errs = s.CanonicalizeOwned(obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ospec := out["spec"].(map[string]any)
	if ospec["size"] != int64(7) {
		t.Errorf("defaulted size: %v", ospec["size"])
	}
	if reflect.ValueOf(ospec).UnsafePointer() == reflect.ValueOf(spec).UnsafePointer() {
		t.Errorf("the changed spec was not copied")
	}
	if reflect.ValueOf(out["metadata"]).UnsafePointer() != reflect.ValueOf(meta).UnsafePointer() ||
		reflect.ValueOf(ospec["parts"]).UnsafePointer() != reflect.ValueOf(parts).UnsafePointer() {
		t.Errorf("parts left alone by defaulting were copied")
	}
}

func TestCanonicalizeFastTakesCommonObjects(t *testing.T) {
	t.Parallel()
	for _, in := range append(fastCorpus[:3:3],
		`{"spec":{"ratio":100000000000000000000,"anys":[1e21,-0,0.000001,1e-7]}}`,
		`{"spec":{"size":null,"on":null,"tags":null,"parts":null,"inner":null,"innerPtr":null,"raw":null,"any":null,"when":null,"quantity":null}}`,
		`{"spec":{"rawMap":{"a":null,"b":[1]}}}`,
		`{"spec":{"bytes":[1,2,3]}}`,
	) {
		obj, err := api.DecodeMap([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, ok := (Typed[fastObject]{}).canonicalizeFast(obj, false); !ok {
			t.Errorf("%s: not taken by the fast path", in)
		}
		t1, err := FromMap[fastObject](obj)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := encodeFast(reflect.ValueOf(t1).Elem(), planOf(reflect.TypeFor[fastObject]()), 0); !ok {
			t.Errorf("%s: not encoded by the fast path", in)
		}
	}
}

func TestJSONFloatMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{
		0, math.Copysign(0, -1), 1, -1, 2.5, 1e-7, 1e20, 1e21, 1e22, -1e22,
		1 << 53, 1<<53 + 2, -(1 << 53), 7.00000000000011e16, 123456789012345680, 1e18, math.MaxInt64, math.MaxFloat64,
	} {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := api.DecodeValue(b)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := jsonFloat(f)
		if !ok || got != want {
			t.Errorf("jsonFloat(%v) = %#v, %v; json.Marshal and decode give %#v", f, got, ok, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, ok := jsonFloat(f); ok {
			t.Errorf("jsonFloat(%v) took a value json.Marshal refuses", f)
		}
	}
}

// rawQuoted marshals as itself between quotes, unescaped (invalid JSON for
// some values); upperQuoted as its upper case, quoted.
type (
	rawQuoted   string
	upperQuoted string
)

func (r rawQuoted) MarshalJSON() ([]byte, error) { return []byte(`"` + string(r) + `"`), nil }

func (u upperQuoted) MarshalJSON() ([]byte, error) {
	return json.Marshal(strings.ToUpper(string(u)))
}

// TestMarshalReuseIsMarshalValue checks that marshalReuse, which skips
// decoding a marshaler's text when it is its input quoted, gives what
// marshalValue gives.
func TestMarshalReuseIsMarshalValue(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "ABC", "abc", `a"b`, `a\b`, "a\x01b", "\xff", "caf\u00e9", "x\u2028y"} {
		for _, v := range []reflect.Value{reflect.ValueOf(rawQuoted(s)), reflect.ValueOf(upperQuoted(s))} {
			want, wantOK := marshalValue(v)
			got, same, ok := marshalReuse(v, s, any(s))
			if ok != wantOK || ok && (got != want || same != (want == any(s))) {
				t.Errorf("%s %q: marshalReuse = %#v, %v, %v; marshalValue = %#v, %v", v.Type(), s, got, same, ok, want, wantOK)
			}
		}
	}
}

// TestEncodeReuseWideStruct checks encodeReuse against encodeFast on a
// struct of more fields than encodeStructReuse keeps a bit for, decoded from
// random objects and then changed at random fields (its one field without
// omitempty, f75, makes a difference after the 64th when an object lacks it).
func TestEncodeReuseWideStruct(t *testing.T) {
	t.Parallel()
	fields := make([]reflect.StructField, 80)
	for i := range fields {
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`json:"f%d,omitempty"`, i))}
		if i == 75 {
			fields[i].Tag = reflect.StructTag(fmt.Sprintf(`json:"f%d"`, i))
		}
	}
	st := reflect.StructOf(fields)
	p := planOf(st)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		orig := map[string]any{}
		for i := range fields {
			if rng.IntN(3) == 0 {
				orig[fmt.Sprintf("f%d", i)] = []string{"", "a", "b"}[rng.IntN(3)]
			}
		}
		v := reflect.New(st).Elem()
		if !decodeFast(orig, p, v, 0) {
			t.Fatalf("decodeFast refused %v", orig)
		}
		for range rng.IntN(3) {
			v.Field(rng.IntN(len(fields))).SetString([]string{"", "a", "c"}[rng.IntN(3)])
		}
		want, wantOK := encodeFast(v, p, 0)
		got, same, ok := encodeReuse(v, p, orig, 0)
		if ok != wantOK {
			t.Fatalf("encodeReuse ok = %v, encodeFast %v", ok, wantOK)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%v: (-encodeFast +encodeReuse):\n%s", orig, diff)
		}
		if same != cmp.Equal(any(orig), want) {
			t.Fatalf("%v: same = %v, but encodeFast gives %v", orig, same, want)
		}
	}
}
