package fieldmanager

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// fuzzBytes hands out the fuzzer's bytes as small choices (0 once spent).
type fuzzBytes []byte

func (b *fuzzBytes) pick(n int) int {
	if len(*b) == 0 {
		return 0
	}
	c := int((*b)[0]) % n
	*b = (*b)[1:]
	return c
}

// fuzzConfig builds an applied Deployment configuration over a small universe
// of fields, so that two managers' configurations overlap often: labels,
// replicas, containers (keyed by name) with image, env (keyed by name) and
// ports (keyed by containerPort and protocol), an atomic map and an atomic
// list.
func fuzzConfig(b *fuzzBytes) map[string]any {
	meta := map[string]any{"name": "web"}
	if labels := fuzzStrings(b, []string{"a", "b", "c"}, []string{"x", "y"}); len(labels) > 0 {
		meta["labels"] = labels
	}
	spec := map[string]any{}
	if r := b.pick(3); r > 0 {
		spec["replicas"] = int64(r)
	}
	var containers []any
	for _, name := range []string{"c1", "c2"} {
		if b.pick(2) == 0 {
			continue
		}
		c := map[string]any{"name": name}
		if img := b.pick(3); img > 0 {
			c["image"] = fmt.Sprintf("img%d", img)
		}
		var env []any
		for _, e := range []string{"E1", "E2"} {
			switch b.pick(3) {
			case 1:
				env = append(env, map[string]any{"name": e, "value": "v1"})
			case 2:
				env = append(env, map[string]any{"name": e, "value": "v2"})
			}
		}
		if len(env) > 0 {
			c["env"] = env
		}
		var ports []any
		for _, p := range []int64{80, 443} {
			switch b.pick(3) {
			case 1:
				ports = append(ports, map[string]any{"containerPort": p})
			case 2:
				ports = append(ports, map[string]any{"containerPort": p, "protocol": "UDP"})
			}
		}
		if len(ports) > 0 {
			c["ports"] = ports
		}
		containers = append(containers, c)
	}
	pod := map[string]any{}
	if len(containers) > 0 {
		pod["containers"] = containers
	}
	if ns := fuzzStrings(b, []string{"k"}, []string{"v", "w"}); len(ns) > 0 {
		pod["nodeSelector"] = ns
	}
	switch b.pick(3) {
	case 1:
		pod["args"] = []any{"x"}
	case 2:
		pod["args"] = []any{"y", "x"}
	}
	if len(pod) > 0 {
		spec["template"] = map[string]any{"spec": pod}
	}
	cfg := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta}
	if len(spec) > 0 {
		cfg["spec"] = spec
	}
	return cfg
}

func fuzzStrings(b *fuzzBytes, keys, values []string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v := b.pick(len(values) + 1); v > 0 {
			out[k] = values[v-1]
		}
	}
	return out
}

// owned is each manager's field set in obj's managedFields, by manager name.
func owned(t *testing.T, obj map[string]any) map[string]*fieldpath.Set {
	t.Helper()
	out := map[string]*fieldpath.Set{}
	meta, _ := obj["metadata"].(map[string]any)
	list, _ := meta["managedFields"].([]any)
	for _, e := range list {
		em := e.(map[string]any)
		set, err := ParseFieldsV1(em["fieldsV1"])
		if err != nil {
			t.Fatalf("stored fieldsV1 does not parse: %v", err)
		}
		name := em["manager"].(string)
		if prev, ok := out[name]; ok {
			set = set.Union(prev)
		}
		out[name] = set
	}
	return out
}

// mustTyped is obj without managedFields, null values and empty objects:
// the zero object Apply starts a create from holds them for fields the Go
// type always writes, which no one owns and the API server writes back from
// the type; they are not fields of the object (the configurations here never
// set an empty object).
func (m *Manager) mustTyped(t *testing.T, obj map[string]any) *typed.TypedValue {
	t.Helper()
	o, _, _ := WithoutManagedFields(obj)
	o, _ = withoutNulls(o).(map[string]any)
	if o == nil {
		o = map[string]any{}
	}
	tv, err := m.typ.typed(o)
	if err != nil {
		t.Fatalf("object does not fit its schema: %v\n%v", err, o)
	}
	return tv
}

// FuzzApplyTwoManagers applies random configurations as manager A, then B,
// then A again (each forced or not) and checks after every apply:
//   - no panic, and no error but a conflict;
//   - every field a manager owns is in the object;
//   - an unforced apply conflicts exactly when it would change a field
//     another manager owns, and then changes nothing; a forced one never
//     conflicts;
//   - an apply removes only fields no other manager owned, and only when the
//     applier owned them before and stopped applying them.
func FuzzApplyTwoManagers(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 1, 1, 2, 1, 2, 1, 1, 2, 2, 1, 1, 0, 1, 2, 1, 1, 0, 1, 1, 2, 0, 0, 1, 2, 2, 1, 1, 2, 1, 1, 2, 1, 0, 1, 2, 1, 0, 0, 1})
	f.Add([]byte("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"))
	f.Add([]byte("\x01\x01\x02\x01\x01\x01\x02\x02\x01\x01\x01\x01\x01\x01\x00\x00\x01\x01\x02\x01\x02\x01\x01\x00\x00\x00\x00\x01\x01\x01\x01\x02\x01\x01\x00"))
	typ, err := TypeOf(reflect.TypeFor[deployment]())
	if err != nil {
		f.Fatal(err)
	}
	m, err := New(Options{Type: typ, APIVersion: "apps/v1", Ignore: []string{"status"}, Now: func() time.Time { return fixed }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzBytes(data)
		var live map[string]any
		for step, manager := range []string{"alice", "bob", "alice"} {
			cfg := fuzzConfig(&b)
			force := b.pick(2) == 1
			var (
				before   = map[string]*fieldpath.Set{}
				liveTV   *typed.TypedValue
				expected = fieldpath.NewSet()
			)
			if live != nil {
				before = owned(t, live)
				liveTV = m.mustTyped(t, live)
				cfgTV, err := m.typ.typed(cfg)
				if err != nil {
					t.Fatalf("config does not fit the schema: %v", err)
				}
				merged, err := liveTV.Merge(cfgTV)
				if err != nil {
					t.Fatal(err)
				}
				c, err := liveTV.Compare(merged)
				if err != nil {
					t.Fatal(err)
				}
				changes := c.Modified.Union(c.Added)
				for name, set := range before {
					if name != manager {
						expected = expected.Union(set.Intersection(changes))
					}
				}
			}
			out, _, err := m.Apply(live, cfg, manager, force)
			var se *apierrors.StatusError
			switch {
			case err == nil:
			case errors.As(err, &se) && se.ErrStatus.Code == 409:
				if force {
					t.Fatalf("step %d: a forced apply conflicted: %v", step, err)
				}
				if expected.Empty() {
					t.Fatalf("step %d: conflict %v, but the apply changes no field another manager owns\nlive %v\nconfig %v", step, err, live, cfg)
				}
				continue // nothing changed
			default:
				t.Fatalf("step %d: apply: %v", step, err)
			}
			if !force && !expected.Empty() {
				t.Fatalf("step %d: no conflict, but the apply changes fields others own: %v\nlive %v\nconfig %v", step, expected, live, cfg)
			}
			after := owned(t, out)
			present := m.mustTyped(t, out)
			presentSet, err := present.ToFieldSet()
			if err != nil {
				t.Fatal(err)
			}
			for name, set := range after {
				if missing := set.Difference(presentSet); !missing.Empty() {
					t.Fatalf("step %d: %s owns fields the object lacks: %v\nobject %v", step, name, missing, out)
				}
			}
			if liveTV != nil {
				c, err := liveTV.Compare(present)
				if err != nil {
					t.Fatal(err)
				}
				if !c.Removed.Empty() {
					mine := before[manager]
					if mine == nil {
						mine = fieldpath.NewSet()
					}
					for name, set := range before {
						if name == manager {
							continue
						}
						if kept := set.Leaves().Intersection(c.Removed.Leaves()); !kept.Empty() {
							t.Fatalf("step %d: %s removed %v, which %s owned\nlive %v\nout %v", step, manager, kept, name, live, out)
						}
					}
					if stray := c.Removed.Leaves().Difference(mine.Leaves()); !stray.Empty() && !onlyDefaults(stray) {
						t.Fatalf("step %d: %s removed %v, which it did not own\nlive %v\nout %v", step, manager, stray, live, out)
					}
				}
			}
			live = out
		}
	})
}

// onlyDefaults reports whether every path of s ends in a field the server
// defaults rather than a manager sets (a port's protocol goes with its
// item).
func onlyDefaults(s *fieldpath.Set) bool {
	ok := true
	s.Iterate(func(p fieldpath.Path) {
		if len(p) == 0 || p[len(p)-1].FieldName == nil || *p[len(p)-1].FieldName != "protocol" {
			ok = false
		}
	})
	return ok
}

// withoutNulls is v without null values and empty objects.
func withoutNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e = withoutNulls(e); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}
