package fieldmanager

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
)

// objGen makes random objects of a Type: the fields of its schema (struct
// fields, map keys, keyed list items whose keys collide now and then, set
// items), with a few that do not fit it (unknown fields, wrong kinds, nulls,
// items without keys, floats), so that both the walk of creates and its
// fallback are exercised.
type objGen struct {
	r *rand.Rand
	// noise is the chance in 1,000 of a value that does not fit its type.
	noise int
}

func (g *objGen) chance(perMille int) bool { return g.r.IntN(1000) < perMille }

func (g *objGen) scalar() any {
	switch g.r.IntN(6) {
	case 0:
		return int64(g.r.IntN(3))
	case 1:
		return g.r.IntN(2) == 0
	case 2:
		if g.chance(g.noise * 5) {
			return 1.5
		}
		return "s"
	case 3:
		// Strings a JSON encoder escapes, in keys too.
		return []string{"a<&>", "é", `q"`, "\t"}[g.r.IntN(4)]
	default:
		return []string{"a", "b", "TCP", ""}[g.r.IntN(4)]
	}
}

func (g *objGen) value(n *cnode, depth int) any {
	if g.chance(g.noise) {
		switch g.r.IntN(4) {
		case 0:
			return nil
		case 1:
			return g.scalar()
		case 2:
			return []any{g.scalar()}
		default:
			return map[string]any{"x": g.scalar()}
		}
	}
	if n.invalid {
		return g.scalar()
	}
	var kinds []atomKinds
	if n.hasMap {
		kinds = append(kinds, aMap)
	}
	if n.hasList {
		kinds = append(kinds, aList)
	}
	if n.hasScalar {
		kinds = append(kinds, aScalar)
	}
	switch kinds[g.r.IntN(len(kinds))] {
	case aMap:
		return g.mapOf(n, depth)
	case aList:
		return g.listOf(n, depth)
	}
	if g.chance(30) {
		return nil
	}
	return g.scalar()
}

func (g *objGen) mapOf(n *cnode, depth int) map[string]any {
	out := map[string]any{}
	if depth > 7 {
		return out
	}
	names := make([]string, 0, len(n.fields))
	for k := range n.fields {
		names = append(names, k)
	}
	slices.Sort(names)
	p := 1000
	if len(names) > 3 {
		p = 2500 / len(names)
	}
	for _, k := range names {
		if g.chance(p) {
			out[k] = g.value(n.fields[k].n, depth+1)
		}
	}
	if n.elem != nil {
		for range g.r.IntN(3) {
			out[[]string{"k1", "k2", "k3", "a<&>", "é", "q\"", "\u2028", "\xff"}[g.r.IntN(8)]] = g.value(n.elem, depth+1)
		}
	}
	if g.chance(g.noise) {
		out["unknownField"] = g.scalar()
	}
	return out
}

func (g *objGen) listOf(n *cnode, depth int) []any {
	var out []any
	if depth > 7 {
		return []any{}
	}
	for range g.r.IntN(4) {
		switch {
		case !n.listAssoc || n.item.invalid:
			out = append(out, g.value(n.item, depth+1))
		case len(n.keys) == 0:
			out = append(out, g.scalar())
		default:
			item, ok := g.value(n.item, depth+1).(map[string]any)
			if !ok {
				out = append(out, item)
				continue
			}
			for i, k := range n.keys {
				if n.keyDefs[i] != nil && g.chance(300) {
					delete(item, k)
					continue
				}
				if !g.chance(g.noise) {
					item[k] = []any{"a", "b", int64(1), int64(2), "é<"}[g.r.IntN(5)]
				}
			}
			out = append(out, item)
		}
	}
	return out
}

// sameCreates creates obj through a manager's walk and through the library's
// comparison and fails unless both store the same managedFields bytes; it
// reports whether the walk handled obj.
func sameCreates(t *testing.T, typ *Type, apiVersion string, ignore []string, obj map[string]any) bool {
	t.Helper()
	now := func() time.Time { return fixed }
	fast, err := New(Options{Type: typ, APIVersion: apiVersion, Ignore: ignore, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := New(Options{Type: typ, APIVersion: apiVersion, Ignore: ignore, Now: now, LibraryCreates: true})
	if err != nil {
		t.Fatal(err)
	}
	_, walked := fast.createFields(&walk{}, obj)
	a, b := api.DeepCopyJSON(obj), api.DeepCopyJSON(obj)
	errA, errB := fast.Update(nil, a, "creator"), slow.Update(nil, b, "creator")
	ea, eb := entries(t, a), entries(t, b)
	if ea != eb || (errA == nil) != (errB == nil) {
		in, _ := api.EncodeJSON(obj)
		t.Fatalf("create of %s:\nwalk:    %s (%v)\nlibrary: %s (%v)", in, ea, errA, eb, errB)
	}
	sameEncoded(t, fast, obj, a, errA)
	return walked
}

// sameEncoded fails unless UpdateEncoded's create of obj, with the entries
// left encoded or decoded, stores the bytes Update's (want, with its error)
// encode to; creates the walk computes must return those bytes, and leave
// them in obj unless asked for decoded entries, which must then be want's.
func sameEncoded(t *testing.T, m *Manager, obj, want map[string]any, wantErr error) {
	t.Helper()
	o, sent, present := WithoutManagedFields(obj)
	sameEmitted(t, m, o)
	_, walked := m.createFields(&walk{}, o)
	walked = walked && (!present || sent == nil || isReset(sent))
	wb, errW := api.EncodeJSON(want)
	if errW != nil {
		t.Fatal(errW)
	}
	wantMF, _ := api.NestedField(want, "metadata", "managedFields")
	for _, decoded := range []bool{false, true} {
		got := api.DeepCopyJSON(obj)
		raw, err := m.UpdateEncoded(nil, got, "creator", time.Time{}, decoded)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("UpdateEncoded: %v, Update: %v", err, wantErr)
		}
		mf, has := api.NestedField(got, "metadata", "managedFields")
		if walked && has && raw == nil {
			t.Fatalf("a walked create returned no encoding")
		}
		if raw != nil {
			if wmf, _ := api.EncodeJSON(wantMF); string(raw) != string(wmf) {
				t.Fatalf("encoded managedFields %s, want %s", raw, wmf)
			}
		}
		if _, isRaw := mf.(api.RawJSON); isRaw != (!decoded && raw != nil) {
			t.Fatalf("decoded %v: managedFields left as %T", decoded, mf)
		}
		if decoded && !reflect.DeepEqual(mf, wantMF) {
			t.Fatalf("decoded managedFields %#v, want %#v", mf, wantMF)
		}
		if gb, err := api.EncodeJSON(got); err != nil || string(gb) != string(wb) {
			in, _ := api.EncodeJSON(obj)
			t.Fatalf("create of %s (decoded %v):\nencoded: %s (%v)\nwant:    %s", in, decoded, gb, err, wb)
		}
	}
}

// sameEmitted fails unless the emitter writes for o (without managedFields)
// the bytes of the node walk's set, and gives up only where the walk does
// or compares values as two kinds; it reports whether the emitter wrote
// them.
func sameEmitted(t *testing.T, m *Manager, o map[string]any) bool {
	t.Helper()
	fields, walked := m.createFields(&walk{}, o)
	got, nonEmpty, ok := m.appendCreateFields([]byte("prefix"), o)
	if !ok {
		return false
	}
	if !walked {
		in, _ := api.EncodeJSON(o)
		t.Fatalf("create of %s: the emitter wrote %s where the walk gave up", in, got)
	}
	want := "prefix"
	if !fields.empty() {
		want = string(fields.appendJSON([]byte(want)))
	}
	if string(got) != want || nonEmpty != !fields.empty() {
		in, _ := api.EncodeJSON(o)
		t.Fatalf("create of %s:\nemitted: %s (%v)\nwalked:  %s", in, got, nonEmpty, want)
	}
	return true
}

// crdSchema is a custom resource's structural schema with every list and map
// type the walk must follow.
var crdSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"spec": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"replicas": map[string]any{"type": "integer"},
				"port":     map[string]any{"x-kubernetes-int-or-string": true},
				"ports": map[string]any{
					"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"port", "protocol"},
					"items": map[string]any{"type": "object", "properties": map[string]any{
						"port":     map[string]any{"type": "integer"},
						"protocol": map[string]any{"type": "string", "default": "TCP"},
						"name":     map[string]any{"type": "string"},
					}},
				},
				"tags":   map[string]any{"type": "array", "x-kubernetes-list-type": "set", "items": map[string]any{"type": "string"}},
				"args":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				"atomic": map[string]any{"type": "array", "x-kubernetes-list-type": "atomic", "items": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}},
				"selector": map[string]any{"type": "object", "x-kubernetes-map-type": "atomic",
					"additionalProperties": map[string]any{"type": "string"}},
				"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
				"free":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				"nested": map[string]any{"type": "object", "properties": map[string]any{
					"items": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"},
						"items": map[string]any{"type": "object", "properties": map[string]any{
							"name":  map[string]any{"type": "string"},
							"value": map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}},
						}}},
				}},
			},
		},
		"status": map[string]any{"type": "object", "properties": map[string]any{
			"phase": map[string]any{"type": "string"},
			"conditions": map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
				"items": map[string]any{"type": "object", "properties": map[string]any{
					"type": map[string]any{"type": "string"}, "status": map[string]any{"type": "string"}}}},
		}},
	},
}

// createTypes are the types the differential tests create objects of: the
// Deployment-like test type and custom resources (with the schema above, and
// without any).
func createTypes(t testing.TB) map[string]*Type {
	t.Helper()
	out := map[string]*Type{}
	var err error
	if out["deployment"], err = TypeOf(reflect.TypeFor[deployment]()); err != nil {
		t.Fatal(err)
	}
	if out["crd"], err = TypeFromOpenAPI(crdSchema, reflect.TypeFor[api.ObjectMeta]()); err != nil {
		t.Fatal(err)
	}
	if out["schemaless"], err = TypeFromOpenAPI(nil, reflect.TypeFor[api.ObjectMeta]()); err != nil {
		t.Fatal(err)
	}
	return out
}

// createObject is a random object of typ, as a client creates it (with
// apiVersion, kind and a name).
func createObject(typ *Type, g *objGen) map[string]any {
	obj := g.mapOf(typ.compiledRoot(), 0)
	obj["apiVersion"], obj["kind"] = "example.com/v1", "Thing"
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["name"], meta["namespace"], meta["uid"] = "x", "default", "u"
	if g.r.IntN(2) == 0 {
		// As the server sets it: a string where the empty object has null.
		meta["creationTimestamp"] = "2026-12-05T06:00:00Z"
	}
	return obj
}

// TestCreateFieldsMatchLibrary: creates computed by the walk store the bytes
// the library's comparison stores, for random objects of the test types with
// and without status ignored; most are walked (the fallback is for what does
// not fit the schema).
func TestCreateFieldsMatchLibrary(t *testing.T) {
	for name, typ := range createTypes(t) {
		for _, ignore := range [][]string{nil, {"status"}} {
			t.Run(fmt.Sprintf("%s ignore=%v", name, ignore), func(t *testing.T) {
				g := &objGen{r: rand.New(rand.NewPCG(1, uint64(len(name)))), noise: 5}
				m, err := New(Options{Type: typ, APIVersion: "example.com/v1", Ignore: ignore})
				if err != nil {
					t.Fatal(err)
				}
				walked, emitted, n := 0, 0, 2000
				for range n {
					o := createObject(typ, g)
					if sameCreates(t, typ, "example.com/v1", ignore, o) {
						walked++
						if o, _, _ := WithoutManagedFields(o); sameEmitted(t, m, o) {
							emitted++
						}
					}
				}
				if walked < n/2 {
					t.Errorf("only %d of %d creates walked", walked, n)
				}
				if emitted < walked*9/10 {
					t.Errorf("the emitter wrote %d of the %d creates the walk handled", emitted, walked)
				}
			})
		}
	}
}

// TestCreateFieldsCases: hand-written creates through both paths, including
// those the walk leaves to the library.
func TestCreateFieldsCases(t *testing.T) {
	typ := createTypes(t)["deployment"]
	for _, s := range []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"}}`,
		`{}`,
		dep,
		`{"metadata":{"name":"a","labels":{}},"spec":{"template":{"spec":{"containers":[]}}}}`,
		`{"metadata":{"name":"a"},"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"a"}]}}}}`,
		`{"metadata":{"name":"a"},"spec":{"template":{"spec":{"containers":[{"image":"a"}]}}}}`,
		`{"metadata":{"name":"a"},"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":1},{"containerPort":1,"protocol":"TCP"}]}]}}}}`,
		`{"metadata":{"name":"a"},"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":1.0}]}]}}}}`,
		`{"metadata":{"name":"a"},"spec":{"selector":null,"template":{"metadata":{"creationTimestamp":null},"spec":{"containers":null}}}}`,
		`{"metadata":{"name":"a"},"spec":{"unknown":1}}`,
		`{"metadata":{"name":"a"},"spec":"x"}`,
		`{"metadata":{"name":"a"},"status":{"replicas":1}}`,
		`{"metadata":{"name":"a","creationTimestamp":"2026-12-05T06:00:00Z"},"spec":{"selector":{"matchLabels":{"a":"b"}}}}`,
		`{"metadata":{"name":"a","creationTimestamp":{"x":1}},"spec":{"template":{"metadata":{"creationTimestamp":[1]}}}}`,
	} {
		for _, ignore := range [][]string{nil, {"status"}} {
			sameCreates(t, typ, "apps/v1", ignore, obj(t, s))
		}
	}
}

// FuzzCreateFields: the walk and the library agree on random objects of the
// test types (the fuzzer picks the type, noise and seed).
func FuzzCreateFields(f *testing.F) {
	f.Add(uint64(1), uint8(0), uint16(5), false)
	f.Add(uint64(2), uint8(1), uint16(50), true)
	f.Add(uint64(3), uint8(2), uint16(0), false)
	types := createTypes(f)
	names := []string{"crd", "deployment", "schemaless"}
	f.Fuzz(func(t *testing.T, seed uint64, which uint8, noise uint16, ignoreStatus bool) {
		name := names[int(which)%len(names)]
		g := &objGen{r: rand.New(rand.NewPCG(seed, uint64(which))), noise: int(noise % 200)}
		var ignore []string
		if ignoreStatus {
			ignore = []string{"status"}
		}
		sameCreates(t, types[name], "example.com/v1", ignore, createObject(types[name], g))
	})
}

// TestCreateFieldsWalksServerObjects: an object as the API server creates it
// (uid, namespace and a creationTimestamp string where the empty object has
// null) is walked, not left to the library.
func TestCreateFieldsWalksServerObjects(t *testing.T) {
	m := newManager(t, Options{Ignore: []string{"status"}})
	o := canon(t, dep)
	meta := o["metadata"].(map[string]any)
	meta["uid"], meta["creationTimestamp"] = "6c1f1a1e-0000-4000-8000-000000000000", "2026-12-05T06:00:00Z"
	if _, ok := m.createFields(&walk{}, o); !ok {
		t.Fatal("the walk gave up on a server's create")
	}
	if !sameCreates(t, m.typ, "apps/v1", []string{"status"}, o) {
		t.Fatal("not walked")
	}
}
