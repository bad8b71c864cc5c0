package patchcompat

import (
	"encoding/json"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/converge-dev/converge/framework/patch"
)

const smpPod = `{"metadata":{"name":"p","finalizers":["x","y"],"labels":{"app":"a"}},"spec":{"containers":[{"name":"a","image":"x","env":[{"name":"A","value":"1"},{"name":"K","value":"k"}]},{"name":"b","image":"x"},{"name":"d","image":"x"}],"tolerations":[{"key":"k1","operator":"Exists"}]}}`

const smpDeployment = `{"metadata":{"name":"d","finalizers":["a.example.com/f","b.example.com/f"]},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx:1.25","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP"}]},{"name":"sidecar","image":"busybox"}]}}}}`

// Strategic merge patches compared with k8s.io/apimachinery's
// strategicpatch.StrategicMergePatch on the typed object, after the typed
// round trip the API server makes (decode into the Go type, encode): that is
// what a client reads back. Kubernetes' raw result keeps some nulls (inside
// elements appended to merge lists, and in atomic lists that replace a list)
// which the typed round trip then drops; Converge drops them while merging.
var knownStrategic = []struct {
	name, doc, patch string
	typ              any
}{
	{"new container goes first", smpPod, `{"spec":{"containers":[{"name":"c","image":"y"}]}}`, corev1.Pod{}},
	{"patched elements in patch order", smpPod, `{"spec":{"containers":[{"name":"d","image":"new"},{"name":"a","image":"new"}]}}`, corev1.Pod{}},
	{"new element after the patched one it follows", smpPod, `{"spec":{"containers":[{"name":"b","image":"new"},{"name":"c"}]}}`, corev1.Pod{}},
	{"primitive merge list", smpPod, `{"metadata":{"finalizers":["z","x"]}}`, corev1.Pod{}},
	{"set element order", smpPod, `{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"d"},{"name":"b"},{"name":"a"}],"containers":[{"name":"c"}]}}`, corev1.Pod{}},
	{"null inside a new container", smpPod, `{"spec":{"containers":[{"name":"new","image":"i","securityContext":{"runAsUser":null,"privileged":true}}]}}`, corev1.Pod{}},
	{"null inside an existing container", smpPod, `{"spec":{"containers":[{"name":"a","image":null,"securityContext":{"runAsUser":null,"privileged":true}}]}}`, corev1.Pod{}},
	{"null inside a new env entry", smpPod, `{"spec":{"containers":[{"name":"a","env":[{"name":"B","value":null,"valueFrom":{"fieldRef":{"fieldPath":"x","apiVersion":null}}}]}]}}`, corev1.Pod{}},
	{"null inside an atomic list replacing a list", smpPod, `{"spec":{"tolerations":[{"key":"k","value":null}]}}`, corev1.Pod{}},
	{"null inside a new atomic list", smpPod, `{"spec":{"imagePullSecrets":[{"name":null}],"readinessGates":[{"conditionType":null}]}}`, corev1.Pod{}},
	{"null in a new nested object", smpPod, `{"spec":{"securityContext":{"runAsUser":null,"sysctls":[{"name":"a","value":null}]}}}`, corev1.Pod{}},
	{"null label", smpPod, `{"metadata":{"labels":{"app":null,"b":"c"}}}`, corev1.Pod{}},
	{"null in a new map", smpPod, `{"spec":{"nodeSelector":{"a":null,"b":"c"}}}`, corev1.Pod{}},
	{"null in a new volume source", smpPod, `{"spec":{"volumes":[{"name":"v","emptyDir":{"medium":null}}]}}`, corev1.Pod{}},
	{"delete directive", smpPod, `{"spec":{"containers":[{"$patch":"delete","name":"b"}]}}`, corev1.Pod{}},
	{"delete from primitive list", smpPod, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["x"]}}`, corev1.Pod{}},
	{"finalizers union", smpDeployment, `{"metadata":{"finalizers":["c.example.com/f","a.example.com/f"]}}`, appsv1.Deployment{}},
	{"keyed merge in a template", smpDeployment, `{"spec":{"template":{"spec":{"containers":[{"name":"new","image":"x"},{"name":"c","ports":[{"containerPort":8080},{"containerPort":80,"name":"http"}]}]}}}}`, appsv1.Deployment{}},
	{"retain keys", smpDeployment, `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`, appsv1.Deployment{}},
}

// typedRoundTrip decodes doc into a new value of typ's type and encodes it.
func typedRoundTrip(t *testing.T, doc []byte, typ any) []byte {
	t.Helper()
	v := reflect.New(reflect.TypeOf(typ))
	if err := json.Unmarshal(doc, v.Interface()); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	out, err := json.Marshal(v.Interface())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestKnownStrategicCases(t *testing.T) {
	t.Parallel()
	for _, tt := range knownStrategic {
		want, kerr := strategicpatch.StrategicMergePatch([]byte(tt.doc), []byte(tt.patch), tt.typ)
		got, err := patch.StrategicMergePatch([]byte(tt.doc), []byte(tt.patch), reflect.TypeOf(tt.typ))
		if (err == nil) != (kerr == nil) {
			t.Errorf("%s: error %v, Kubernetes %v", tt.name, err, kerr)
			continue
		}
		if err != nil {
			continue
		}
		if g, w := typedRoundTrip(t, got, tt.typ), typedRoundTrip(t, want, tt.typ); !sameJSON(g, w) {
			t.Errorf("%s:\n  got %s\n want %s", tt.name, g, w)
		}
	}
}

// podDoc returns a random Pod with the lists strategic merge patch treats
// differently: containers and env (merged by name), ports (by containerPort),
// args (atomic), finalizers (a merged set), tolerations (atomic objects).
func (g *gen) podDoc() map[string]any {
	names := []string{"a", "b", "c", "d"}
	var containers []any
	for _, n := range names {
		if !g.chance(0.6) {
			continue
		}
		c := map[string]any{"name": n, "image": genStrings[g.pick(len(genStrings))]}
		if g.chance(0.5) {
			c["env"] = g.envList()
		}
		if g.chance(0.4) {
			c["ports"] = g.portList()
		}
		if g.chance(0.3) {
			c["args"] = []any{"-v", "-x"}
		}
		containers = append(containers, c)
	}
	g.r.Shuffle(len(containers), func(i, j int) { containers[i], containers[j] = containers[j], containers[i] })
	spec := map[string]any{"containers": containers}
	if g.chance(0.4) {
		spec["tolerations"] = []any{map[string]any{"key": "k1", "operator": "Exists"}}
	}
	if g.chance(0.4) {
		spec["nodeSelector"] = map[string]any{"disk": "ssd"}
	}
	meta := map[string]any{"name": "p", "labels": map[string]any{"app": "a"}}
	if g.chance(0.5) {
		meta["finalizers"] = g.primitiveList()
	}
	return map[string]any{"metadata": meta, "spec": spec}
}

func (g *gen) envList() []any {
	var out []any
	for _, n := range []string{"A", "B", "C"} {
		if g.chance(0.5) {
			e := map[string]any{"name": n}
			if g.chance(0.7) {
				e["value"] = genStrings[g.pick(len(genStrings))]
			} else if g.chance(0.5) {
				e["value"] = nil
			}
			out = append(out, e)
		}
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (g *gen) portList() []any {
	var out []any
	for _, p := range []int{80, 443, 8080} {
		if g.chance(0.5) {
			e := map[string]any{"containerPort": p}
			if g.chance(0.5) {
				e["name"] = "p" + string(rune('a'+p%7))
			}
			out = append(out, e)
		}
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (g *gen) primitiveList() []any {
	var out []any
	for _, f := range []string{"x", "y", "z"} {
		if g.chance(0.5) {
			out = append(out, f)
		}
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// podPatch returns a random strategic merge patch for a Pod.
func (g *gen) podPatch() map[string]any {
	spec := map[string]any{}
	if g.chance(0.8) {
		var cs []any
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			if !g.chance(0.4) {
				continue
			}
			c := map[string]any{"name": n}
			switch g.pick(8) {
			case 0:
				c["$patch"] = "delete"
			case 1:
				c["image"] = nil
			default:
				c["image"] = "i" + n
			}
			if g.chance(0.4) {
				c["env"] = g.envList()
			}
			if g.chance(0.3) {
				c["ports"] = g.portList()
			}
			if g.chance(0.2) {
				c["securityContext"] = map[string]any{"runAsUser": nil, "privileged": true}
			}
			cs = append(cs, c)
		}
		g.r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		spec["containers"] = cs
	}
	if g.chance(0.2) {
		spec["tolerations"] = []any{map[string]any{"key": "k", "value": nil}}
	}
	if g.chance(0.2) {
		spec["nodeSelector"] = map[string]any{"disk": nil, "zone": "a"}
	}
	p := map[string]any{"spec": spec}
	if g.chance(0.4) {
		meta := map[string]any{"finalizers": g.primitiveList()}
		if g.chance(0.3) {
			meta["labels"] = map[string]any{"app": nil, "x": "y"}
		}
		p["metadata"] = meta
	}
	return p
}

// TestRandomStrategicMergePatch compares 5,000 seeded random Pods and
// strategic merge patches with Kubernetes' strategicpatch, as read back after
// the typed round trip.
func TestRandomStrategicMergePatch(t *testing.T) {
	t.Parallel()
	const n = 5000
	bad := 0
	for i := range n {
		g := newGen(6902, uint64(i))
		doc, _ := json.Marshal(g.podDoc())
		p, _ := json.Marshal(g.podPatch())
		want, kerr := strategicpatch.StrategicMergePatch(doc, p, corev1.Pod{})
		got, err := patch.StrategicMergePatch(doc, p, reflect.TypeFor[corev1.Pod]())
		switch {
		case (err == nil) != (kerr == nil):
			bad++
			if bad <= 10 {
				t.Errorf("case %d: doc %s patch %s: error %v, Kubernetes %v", i, doc, p, err, kerr)
			}
		case err == nil:
			if g, w := typedRoundTrip(t, got, corev1.Pod{}), typedRoundTrip(t, want, corev1.Pod{}); !sameJSON(g, w) {
				bad++
				if bad <= 10 {
					t.Errorf("case %d: doc %s patch %s:\n  got %s\n want %s", i, doc, p, g, w)
				}
			}
		}
	}
	t.Logf("%d cases: %d disagree", n, bad)
}
