package patchcompat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/converge-dev/converge/framework/patch"
)

func TestMain(m *testing.M) {
	// As the API server sets it (JSONPatchMaxCopyBytes); the library's own
	// default is unlimited. Set once before any test runs.
	jsonpatch.AccumulatedCopySizeLimit = patch.MaxCopyBytes
	os.Exit(m.Run())
}

// Outcome classes, as the API server answers them.
const (
	classOK       = "ok"
	classBad      = "400"       // the patch is malformed
	classConflict = "422"       // the patch does not apply
	classDoc      = "bad doc"   // the document is not valid (never from the API server)
	classPanic    = "panic 500" // the library panics; the API server answers 500
)

type outcome struct {
	class string
	out   []byte
	msg   string
}

func ours(err error, out []byte) outcome {
	switch {
	case err == nil:
		return outcome{class: classOK, out: out}
	case errors.Is(err, patch.ErrBadPatch):
		return outcome{class: classBad, msg: err.Error()}
	case errors.Is(err, patch.ErrInvalidDocument):
		return outcome{class: classDoc, msg: err.Error()}
	default:
		return outcome{class: classConflict, msg: err.Error()}
	}
}

func oursJSONPatch(doc, p []byte) outcome {
	out, err := patch.JSONPatch(doc, p)
	return ours(err, out)
}

func oursMergePatch(doc, p []byte) outcome {
	out, err := patch.MergePatch(doc, p)
	return ours(err, out)
}

// evanJSONPatch applies p as k8s.io/apiserver's patch handler does.
func evanJSONPatch(doc, p []byte) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{class: classPanic, msg: fmt.Sprint(r)}
		}
	}()
	ops, err := jsonpatch.DecodePatch(p)
	if err != nil {
		return outcome{class: classBad, msg: err.Error()}
	}
	out, err := ops.Apply(doc)
	if err != nil {
		return outcome{class: classConflict, msg: err.Error()}
	}
	return outcome{class: classOK, out: out}
}

func evanMergePatch(doc, p []byte) (o outcome) {
	defer func() {
		if r := recover(); r != nil {
			o = outcome{class: classPanic, msg: fmt.Sprint(r)}
		}
	}()
	out, err := jsonpatch.MergePatch(doc, p)
	switch {
	case err == nil:
		return outcome{class: classOK, out: out}
	case errors.Is(err, jsonpatch.ErrBadJSONPatch):
		return outcome{class: classBad, msg: err.Error()}
	case errors.Is(err, jsonpatch.ErrBadJSONDoc):
		return outcome{class: classDoc, msg: err.Error()}
	default:
		return outcome{class: classConflict, msg: err.Error()}
	}
}

// disagreement describes how ours differs from the library's outcome, or is
// empty when they agree. A library panic agrees with our 422: both refuse.
func disagreement(got, want outcome) string {
	if want.class == classPanic && got.class == classConflict {
		return ""
	}
	if got.class != want.class {
		return fmt.Sprintf("ours %s (%s%s), library %s (%s%s)", got.class, got.out, got.msg, want.class, want.out, want.msg)
	}
	if got.class == classOK && !sameJSON(got.out, want.out) {
		return fmt.Sprintf("ours %s, library %s", got.out, want.out)
	}
	return ""
}

func sameJSON(a, b []byte) bool {
	va, err1 := decodeNumbers(a)
	vb, err2 := decodeNumbers(b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(va, vb)
}

func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// The cases where framework/patch used to disagree with Kubernetes, with what
// Kubernetes answers.
var knownJSONPatch = []struct {
	name, doc, patch string
	want             string // the document, or an outcome class
}{
	{"replace of a missing member adds it", `{"a":1}`, `[{"op":"replace","path":"/b","value":2}]`, `{"a":1,"b":2}`},
	{"copy from a missing member adds null", `{"a":1}`, `[{"op":"copy","from":"/x","path":"/b"}]`, `{"a":1,"b":null}`},
	{"test of a missing member with null", `{"a":1}`, `[{"op":"test","path":"/x","value":null}]`, `{"a":1}`},
	{"test of a missing member without value", `{"a":1}`, `[{"op":"test","path":"/x"}]`, `{"a":1}`},
	{"test of a missing member with a value fails", `{"a":1}`, `[{"op":"test","path":"/x","value":1}]`, classConflict},
	{"test of a null member with null", `{"a":null}`, `[{"op":"test","path":"/a","value":null}]`, `{"a":null}`},
	{"test compares numbers as written", `{"a":1}`, `[{"op":"test","path":"/a","value":1.0}]`, classConflict},
	{"test compares strings as written", `{"a":"A"}`, `[{"op":"test","path":"/a","value":"\u0041"}]`, classConflict},
	{"test of an unescaped HTML character", `{"a":"\u003c"}`, `[{"op":"test","path":"/a","value":"<"}]`, classConflict},
	{"test of a string the patch added", `{}`, `[{"op":"add","path":"/a","value":"<"},{"op":"test","path":"/a","value":"<"}]`, `{"a":"<"}`},
	{"test of a string the patch copied", `{}`, `[{"op":"add","path":"/a","value":"<"},{"op":"copy","from":"/a","path":"/b"},{"op":"test","path":"/b","value":"\u003c"}]`, `{"a":"<","b":"<"}`},
	{"test meets a null in an array", `{"a":[null]}`, `[{"op":"test","path":"/a","value":[null]}]`, classConflict},
	{"test of null put by value against a null member", `{"a":{}}`, `[{"op":"add","path":"/a/b","value":null},{"op":"test","path":"/a","value":{"b":null}}]`, classConflict},
	{"add without value adds null", `{"a":1}`, `[{"op":"add","path":"/b"}]`, `{"a":1,"b":null}`},
	{"replace without value sets null", `{"a":1}`, `[{"op":"replace","path":"/a"}]`, `{"a":null}`},
	{"add of the whole document fails", `{"a":1}`, `[{"op":"add","path":"","value":{"b":2}}]`, classConflict},
	{"replace of the whole document with a scalar fails", `{"a":1}`, `[{"op":"replace","path":"","value":1}]`, classConflict},
	{"replace of the whole document with an array", `{"a":1}`, `[{"op":"replace","path":"","value":[1]}]`, `[1]`},
	{"negative index replaces from the end", `{"a":[1,2,3]}`, `[{"op":"replace","path":"/a/-1","value":9}]`, `{"a":[1,2,9]}`},
	{"add at -1 appends", `{"a":[1,2]}`, `[{"op":"add","path":"/a/-1","value":3}]`, `{"a":[1,2,3]}`},
	{"remove at -len removes the first", `{"a":[1,2]}`, `[{"op":"remove","path":"/a/-2"}]`, `{"a":[2]}`},
	{"index with leading zeros", `{"a":[1,2]}`, `[{"op":"replace","path":"/a/01","value":3}]`, `{"a":[1,3]}`},
	{"index with a plus sign", `{"a":[1,2]}`, `[{"op":"remove","path":"/a/+0"}]`, `{"a":[2]}`},
	{"path without leading slash ignores its first segment", `{"a":1}`, `[{"op":"add","path":"x/b","value":2}]`, `{"a":1,"b":2}`},
	{"path without any slash fails", `{"a":1}`, `[{"op":"add","path":"b","value":2}]`, classConflict},
	{"tilde not followed by 0 or 1 is literal", `{}`, `[{"op":"add","path":"/a~2","value":1}]`, `{"a~2":1}`},
	{"unknown op is a 422", `{}`, `[{"op":"frobnicate","path":"/a"}]`, classConflict},
	{"missing path is a 422", `{}`, `[{"op":"add","value":1}]`, classConflict},
	{"null operation is a 422", `{}`, `[null]`, classConflict},
	{"null patch changes nothing", `{"a":1}`, `null`, `{"a":1}`},
	{"operation that is not an object is a 400", `{}`, `[1]`, classBad},
	{"move into its own child is a 422", `{"a":{}}`, `[{"op":"move","from":"/a","path":"/a/b"}]`, classConflict},
	{"copy of a null put by value reads as an empty object", `{}`, `[{"op":"add","path":"/a","value":null},{"op":"copy","from":"/a","path":"/b"},{"op":"test","path":"/b","value":{}}]`, `{"a":null,"b":null}`},
}

var knownMergePatch = []struct {
	name, doc, patch string
	want             string
}{
	{"null in an object inside an array of a new member is dropped", `{}`, `{"a":[{"b":null,"c":1}]}`, `{"a":[{"c":1}]}`},
	{"null in an object inside an array replacing a scalar is dropped", `{"a":1}`, `{"a":[{"b":null}]}`, `{"a":[{}]}`},
	{"array replacing an object keeps its nulls", `{"a":{}}`, `{"a":[{"b":null}]}`, `{"a":[{"b":null}]}`},
	{"null array elements stay", `{}`, `{"a":[null,{"b":null}]}`, `{"a":[null,{}]}`},
	{"array patch replaces the document, nulls dropped", `{"a":1}`, `[{"b":null}]`, `[{}]`},
	{"object patch on an array document, nulls dropped", `[1]`, `{"a":{"b":null},"c":null}`, `{"a":{}}`},
	{"null patch is a 400", `{"a":1}`, `null`, classBad},
	{"string patch is a 400", `{"a":1}`, `"x"`, classBad},
	{"number patch is a 400", `{"a":1}`, `1`, classBad},
	{"null document is refused", `null`, `{"a":1}`, classDoc},
}

func checkKnown(t *testing.T, name, doc, p, want string, ours, lib outcome) {
	t.Helper()
	if d := disagreement(ours, lib); d != "" {
		t.Errorf("%s: %s", name, d)
	}
	switch want {
	case classOK, classBad, classConflict, classDoc:
		if ours.class != want {
			t.Errorf("%s: ours %s (%s%s), want %s", name, ours.class, ours.out, ours.msg, want)
		}
	default:
		if ours.class != classOK || !sameJSON(ours.out, []byte(want)) {
			t.Errorf("%s: ours %s (%s%s), want %s", name, ours.class, ours.out, ours.msg, want)
		}
	}
}

func TestKnownJSONPatchCases(t *testing.T) {
	t.Parallel()
	for _, tt := range knownJSONPatch {
		doc, p := []byte(tt.doc), []byte(tt.patch)
		checkKnown(t, tt.name, tt.doc, tt.patch, tt.want, oursJSONPatch(doc, p), evanJSONPatch(doc, p))
	}
}

func TestKnownMergePatchCases(t *testing.T) {
	t.Parallel()
	for _, tt := range knownMergePatch {
		doc, p := []byte(tt.doc), []byte(tt.patch)
		checkKnown(t, tt.name, tt.doc, tt.patch, tt.want, oursMergePatch(doc, p), evanMergePatch(doc, p))
	}
}

const randomCases = 40000

// TestRandomJSONPatch runs 40,000 seeded random documents and JSON patches
// through both and requires no disagreement. It also requires the same error
// message wherever both refuse a patch that applies (422), since the API
// server returns the message to the client.
func TestRandomJSONPatch(t *testing.T) {
	t.Parallel()
	var bad, msgs, ok, panics int
	for i := range randomCases {
		g := newGen(23, uint64(i))
		d := g.doc()
		doc, _ := json.Marshal(d)
		p := rewriteStrings(g, g.jsonPatch(d))
		doc = rewriteStrings(g, doc)
		got, want := oursJSONPatch(doc, p), evanJSONPatch(doc, p)
		if want.class == classOK {
			ok++
		}
		if want.class == classPanic {
			panics++
		}
		if dis := disagreement(got, want); dis != "" {
			if bad++; bad <= 10 {
				t.Errorf("case %d: doc %s patch %s: %s", i, doc, p, dis)
			}
		} else if got.class == classConflict && want.class == classConflict && got.msg != want.msg {
			if msgs++; msgs <= 10 {
				t.Errorf("case %d: doc %s patch %s: message %q, library %q", i, doc, p, got.msg, want.msg)
			}
		}
	}
	t.Logf("%d cases: %d disagree, %d messages differ; the library applied %d and panicked on %d", randomCases, bad, msgs, ok, panics)
}

// TestRandomMergePatch does the same for merge patches.
func TestRandomMergePatch(t *testing.T) {
	t.Parallel()
	var bad, ok int
	for i := range randomCases {
		g := newGen(7386, uint64(i))
		d := g.doc()
		doc, _ := json.Marshal(d)
		p, _ := json.Marshal(g.mergePatch(d))
		got, want := oursMergePatch(doc, p), evanMergePatch(doc, p)
		if want.class == classOK {
			ok++
		}
		if dis := disagreement(got, want); dis != "" {
			if bad++; bad <= 10 {
				t.Errorf("case %d: doc %s patch %s: %s", i, doc, p, dis)
			}
		}
	}
	t.Logf("%d cases: %d disagree; the library applied %d", randomCases, bad, ok)
}

// fuzzInputs keeps the fuzz inputs whose document is what the API server
// applies patches to: a JSON object or array, its first byte '{' or '['.
func fuzzInputs(doc, p []byte) ([]byte, []byte, bool) {
	if len(doc) == 0 || doc[0] != '{' && doc[0] != '[' || !json.Valid(doc) {
		return nil, nil, false
	}
	return doc, p, true
}

// rewriteStrings writes some strings of JSON text the way encoding/json does
// not ("<" unescaped, "x" as "\u0078"), as hand-written patches may.
func rewriteStrings(g *gen, text []byte) []byte {
	if g.chance(0.7) {
		return text
	}
	text = bytes.ReplaceAll(text, []byte(`\u003c`), []byte(`<`))
	if g.chance(0.5) {
		text = bytes.ReplaceAll(text, []byte(`"x"`), []byte(`"\u0078"`))
	}
	return text
}

func FuzzJSONPatchAgainstEvanphx(f *testing.F) {
	for _, tt := range knownJSONPatch {
		f.Add(tt.doc, tt.patch)
	}
	g := newGen(1, 1)
	for range 20 {
		d := g.doc()
		doc, _ := json.Marshal(d)
		f.Add(string(doc), string(g.jsonPatch(d)))
	}
	f.Fuzz(func(t *testing.T, docText, patchText string) {
		doc, p, ok := fuzzInputs([]byte(docText), []byte(patchText))
		if !ok {
			return
		}
		if d := disagreement(oursJSONPatch(doc, p), evanJSONPatch(doc, p)); d != "" {
			t.Fatalf("doc %s patch %s: %s", doc, p, d)
		}
	})
}

func FuzzMergePatchAgainstEvanphx(f *testing.F) {
	for _, tt := range knownMergePatch {
		f.Add(tt.doc, tt.patch)
	}
	g := newGen(2, 2)
	for range 20 {
		d := g.doc()
		doc, _ := json.Marshal(d)
		p, _ := json.Marshal(g.mergePatch(d))
		f.Add(string(doc), string(p))
	}
	f.Fuzz(func(t *testing.T, docText, patchText string) {
		doc, p, ok := fuzzInputs([]byte(docText), []byte(patchText))
		if !ok {
			return
		}
		if d := disagreement(oursMergePatch(doc, p), evanMergePatch(doc, p)); d != "" {
			t.Fatalf("doc %s patch %s: %s", doc, p, d)
		}
	})
}
