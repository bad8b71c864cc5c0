package patch

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

// Test-only types carrying the Kubernetes strategic-merge-patch tags.
type testDeployment struct {
	api.TypeMeta `json:",inline"`
	Metadata     api.ObjectMeta       `json:"metadata,omitempty"`
	Spec         testDeploymentSpec   `json:"spec,omitempty"`
	Status       testDeploymentStatus `json:"status,omitempty"`
}

type testDeploymentSpec struct {
	Replicas *int32             `json:"replicas,omitempty"`
	Selector *api.LabelSelector `json:"selector"`
	Template testPodTemplate    `json:"template"`
	Strategy testStrategy       `json:"strategy,omitempty" patchStrategy:"retainKeys"`
}

type testStrategy struct {
	Type          string             `json:"type,omitempty"`
	RollingUpdate *testRollingUpdate `json:"rollingUpdate,omitempty"`
}

type testRollingUpdate struct {
	MaxUnavailable *api.IntOrString `json:"maxUnavailable,omitempty"`
	MaxSurge       *api.IntOrString `json:"maxSurge,omitempty"`
}

type testDeploymentStatus struct {
	Replicas   int32           `json:"replicas,omitempty"`
	Conditions []api.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

type testPodTemplate struct {
	Metadata api.ObjectMeta `json:"metadata,omitempty"`
	Spec     testPodSpec    `json:"spec,omitempty"`
}

type testPodSpec struct {
	Volumes        []testVolume      `json:"volumes,omitempty" patchStrategy:"merge,retainKeys" patchMergeKey:"name"`
	InitContainers []testContainer   `json:"initContainers,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Containers     []testContainer   `json:"containers" patchStrategy:"merge" patchMergeKey:"name"`
	NodeSelector   map[string]string `json:"nodeSelector,omitempty"`
	Tolerations    []testToleration  `json:"tolerations,omitempty"`
	Overhead       map[string]any    `json:"overhead,omitempty"`
	Extra          api.RawExtension  `json:"extra,omitempty"`
}

type testToleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

type testVolume struct {
	Name             string `json:"name"`
	testVolumeSource `json:",inline"`
}

type testVolumeSource struct {
	HostPath  *testHostPath  `json:"hostPath,omitempty"`
	EmptyDir  *testEmptyDir  `json:"emptyDir,omitempty"`
	ConfigMap *testConfigMap `json:"configMap,omitempty"`
}

type testHostPath struct {
	Path string `json:"path"`
}

type testEmptyDir struct {
	Medium string `json:"medium,omitempty"`
}

type testConfigMap struct {
	Name  string   `json:"name,omitempty"`
	Items []string `json:"items,omitempty"`
}

type testContainer struct {
	Name         string              `json:"name"`
	Image        string              `json:"image,omitempty"`
	Command      []string            `json:"command,omitempty"`
	Args         []string            `json:"args,omitempty"`
	Ports        []testPort          `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"containerPort"`
	Env          []testEnv           `json:"env,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	Resources    testResources       `json:"resources,omitempty"`
	VolumeMounts []testVolumeMount   `json:"volumeMounts,omitempty" patchStrategy:"merge" patchMergeKey:"mountPath"`
	Probe        *testProbe          `json:"livenessProbe,omitempty"`
	Lifecycle    map[string]testPort `json:"lifecycle,omitempty"`
}

type testPort struct {
	Name          string `json:"name,omitempty"`
	ContainerPort int32  `json:"containerPort"`
	Protocol      string `json:"protocol,omitempty"`
}

type testEnv struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

type testResources struct {
	Limits   map[string]api.Quantity `json:"limits,omitempty"`
	Requests map[string]api.Quantity `json:"requests,omitempty"`
}

type testVolumeMount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	ReadOnly  bool   `json:"readOnly,omitempty"`
}

type testProbe struct {
	Port             api.IntOrString `json:"port"`
	PeriodSeconds    int64           `json:"periodSeconds,omitempty"`
	FailureThreshold int32           `json:"failureThreshold,omitempty"`
}

var deploymentType = reflect.TypeFor[testDeployment]()

const liveDeployment = `{
 "apiVersion":"apps/v1","kind":"Deployment",
 "metadata":{"name":"d1","namespace":"default","uid":"u-1","resourceVersion":"12345678901234","generation":3,
   "labels":{"app":"d1","tier":"web"},
   "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{old}\n"},
   "finalizers":["a.example.com/f","b.example.com/f"],
   "ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o1","uid":"o-1"},{"apiVersion":"v1","kind":"ConfigMap","name":"o2","uid":"o-2"}]},
 "spec":{"replicas":1,
   "selector":{"matchLabels":{"app":"d1"}},
   "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":1}},
   "template":{"metadata":{"labels":{"app":"d1"}},
     "spec":{
       "volumes":[{"name":"cache","emptyDir":{}},{"name":"cfg","configMap":{"name":"cm1","items":["a"]}}],
       "tolerations":[{"key":"k1","operator":"Exists"},{"key":"k2","operator":"Exists"}],
       "nodeSelector":{"disk":"ssd","zone":"a"},
       "containers":[
         {"name":"c","image":"nginx:1.25","args":["-a","-b"],
          "env":[{"name":"A","value":"1"},{"name":"K","value":"keep"}],
          "ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP"}],
          "resources":{"limits":{"cpu":"500m","memory":"128Mi"}},
          "volumeMounts":[{"name":"cache","mountPath":"/cache"},{"name":"cfg","mountPath":"/etc/cfg"}],
          "livenessProbe":{"port":8080,"periodSeconds":10}},
         {"name":"sidecar","image":"busybox"}]}}},
 "status":{"replicas":1,"conditions":[{"type":"Available","status":"True"},{"type":"Progressing","status":"True"}]}
}`

func TestStrategicMergePatchDeployment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		patch string
		// check lists JSON pointer → expected JSON value (or "<absent>") in the result.
		check map[string]string
	}{
		{
			name: "kubectl client-side apply body (WIRE.md 8.1)",
			patch: `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{new}\n"}},
 "spec":{"replicas":2,"template":{"spec":{"$setElementOrder/containers":[{"name":"c"}],
   "containers":[{"$setElementOrder/env":[{"name":"B"}],"env":[{"name":"B","value":"2"},{"$patch":"delete","name":"A"}],"image":"nginx:1.26","name":"c"}]}}}}`,
			check: map[string]string{
				"/metadata/annotations":                 `{"kubectl.kubernetes.io/last-applied-configuration":"{new}\n"}`,
				"/metadata/labels":                      `{"app":"d1","tier":"web"}`,
				"/metadata/resourceVersion":             `"12345678901234"`,
				"/spec/replicas":                        `2`,
				"/spec/template/spec/containers/0/name": `"c"`,
				// B is named by $setElementOrder, K (not in the order) follows.
				"/spec/template/spec/containers/0/env":   `[{"name":"B","value":"2"},{"name":"K","value":"keep"}]`,
				"/spec/template/spec/containers/0/image": `"nginx:1.26"`,
				"/spec/template/spec/containers/0/ports": `[{"containerPort":80,"protocol":"TCP"},{"containerPort":443,"protocol":"TCP"}]`,
				"/spec/template/spec/containers/1":       `{"name":"sidecar","image":"busybox"}`,
				"/spec/template/spec/tolerations":        `[{"key":"k1","operator":"Exists"},{"key":"k2","operator":"Exists"}]`,
			},
		},
		{
			name: "kubectl apply removing a container port",
			patch: `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"sidecar"}],
   "containers":[{"$setElementOrder/ports":[{"containerPort":80}],"name":"c","ports":[{"$patch":"delete","containerPort":443}]}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/containers/0/ports": `[{"containerPort":80,"protocol":"TCP"}]`,
				"/spec/template/spec/containers/0/env":   `[{"name":"A","value":"1"},{"name":"K","value":"keep"}]`,
				"/spec/template/spec/containers/1/name":  `"sidecar"`,
			},
		},
		{
			// Without $setElementOrder, Kubernetes lists the patch's elements in
			// the patch's order, new ones in front of the live-only ones
			// (k8s.io/apimachinery strategicpatch gives exactly this).
			name:  "keyed merge orders as the patch",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"new","image":"x"},{"name":"c","ports":[{"containerPort":8080},{"containerPort":80,"name":"http"}]}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/containers/1/ports": `[{"containerPort":8080},{"containerPort":80,"protocol":"TCP","name":"http"},{"containerPort":443,"protocol":"TCP"}]`,
				"/spec/template/spec/containers/1/image": `"nginx:1.25"`,
				"/spec/template/spec/containers/0":       `{"name":"new","image":"x"}`,
				"/spec/template/spec/containers/2/name":  `"sidecar"`,
			},
		},
		{
			name:  "set element order reorders without other changes",
			patch: `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"sidecar"},{"name":"c"}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/containers/0/name": `"sidecar"`,
				"/spec/template/spec/containers/1/name": `"c"`,
			},
		},
		{
			name:  "partial set element order puts named elements first",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"z","image":"z"}],"$setElementOrder/containers":[{"name":"z"},{"name":"sidecar"}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/containers/0/name": `"z"`,
				"/spec/template/spec/containers/1/name": `"sidecar"`,
				"/spec/template/spec/containers/2/name": `"c"`,
			},
		},
		{
			name:  "list without merge strategy is replaced",
			patch: `{"spec":{"template":{"spec":{"tolerations":[{"key":"k3","operator":"Exists"}],"containers":[{"name":"c","args":["-c"]}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/tolerations":       `[{"key":"k3","operator":"Exists"}]`,
				"/spec/template/spec/containers/0/args": `["-c"]`,
			},
		},
		{
			name:  "replace directive in keyed list",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"i"},{"$patch":"replace"}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/containers": `[{"name":"only","image":"i"}]`,
			},
		},
		{
			name:  "replace directive in map",
			patch: `{"spec":{"template":{"spec":{"nodeSelector":{"$patch":"replace","zone":"b"}}}}}`,
			check: map[string]string{
				"/spec/template/spec/nodeSelector": `{"zone":"b"}`,
			},
		},
		{
			name:  "delete directive in map",
			patch: `{"spec":{"strategy":{"rollingUpdate":{"$patch":"delete"}}}}`,
			check: map[string]string{
				"/spec/strategy": `{"type":"RollingUpdate"}`,
			},
		},
		{
			name:  "null deletes keys",
			patch: `{"metadata":{"labels":{"tier":null,"new":"1"}},"spec":{"template":{"spec":{"nodeSelector":null}}}}`,
			check: map[string]string{
				"/metadata/labels":                 `{"app":"d1","new":"1"}`,
				"/spec/template/spec/nodeSelector": `<absent>`,
			},
		},
		{
			name:  "retainKeys on deployment strategy",
			patch: `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`,
			check: map[string]string{
				"/spec/strategy": `{"type":"Recreate"}`,
			},
		},
		{
			name:  "merge keeps other strategy keys without retainKeys",
			patch: `{"spec":{"strategy":{"rollingUpdate":{"maxSurge":"50%"}}}}`,
			check: map[string]string{
				"/spec/strategy": `{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":"50%"}}`,
			},
		},
		{
			name:  "retainKeys in volumes switches the source",
			patch: `{"spec":{"template":{"spec":{"volumes":[{"$retainKeys":["hostPath","name"],"name":"cache","hostPath":{"path":"/x"}}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/volumes": `[{"name":"cache","hostPath":{"path":"/x"}},{"name":"cfg","configMap":{"name":"cm1","items":["a"]}}]`,
			},
		},
		{
			name:  "inline struct fields merge",
			patch: `{"spec":{"template":{"spec":{"volumes":[{"name":"cfg","configMap":{"items":["b"]}}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/volumes/1": `{"name":"cfg","configMap":{"name":"cm1","items":["b"]}}`,
			},
		},
		{
			name:  "volumeMounts keyed by mountPath",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"c","volumeMounts":[{"mountPath":"/etc/cfg","readOnly":true},{"$patch":"delete","mountPath":"/cache"}]}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/containers/0/volumeMounts": `[{"name":"cfg","mountPath":"/etc/cfg","readOnly":true}]`,
			},
		},
		{
			name:  "finalizers union",
			patch: `{"metadata":{"finalizers":["c.example.com/f","a.example.com/f"]}}`,
			check: map[string]string{
				"/metadata/finalizers": `["c.example.com/f","a.example.com/f","b.example.com/f"]`,
			},
		},
		{
			name:  "delete from primitive list",
			patch: `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a.example.com/f"]}}`,
			check: map[string]string{
				"/metadata/finalizers": `["b.example.com/f"]`,
			},
		},
		{
			name:  "primitive list with order",
			patch: `{"metadata":{"$setElementOrder/finalizers":["c","b.example.com/f"],"finalizers":["c"]}}`,
			check: map[string]string{
				"/metadata/finalizers": `["c","b.example.com/f","a.example.com/f"]`,
			},
		},
		{
			name:  "ownerReferences merge on uid",
			patch: `{"metadata":{"ownerReferences":[{"uid":"o-2","controller":true},{"uid":"o-3","apiVersion":"v1","kind":"Secret","name":"o3"},{"$patch":"delete","uid":"o-1"}]}}`,
			check: map[string]string{
				"/metadata/ownerReferences": `[{"apiVersion":"v1","kind":"ConfigMap","name":"o2","uid":"o-2","controller":true},{"uid":"o-3","apiVersion":"v1","kind":"Secret","name":"o3"}]`,
			},
		},
		{
			name:  "status conditions keyed by type",
			patch: `{"status":{"conditions":[{"type":"Progressing","status":"False","reason":"Stuck"}]}}`,
			check: map[string]string{
				"/status/conditions": `[{"type":"Available","status":"True"},{"type":"Progressing","status":"False","reason":"Stuck"}]`,
			},
		},
		{
			name:  "leaf values are replaced",
			patch: `{"spec":{"template":{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1"}},"livenessProbe":{"port":"http"}}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/containers/0/resources":     `{"limits":{"cpu":"1","memory":"128Mi"}}`,
				"/spec/template/spec/containers/0/livenessProbe": `{"port":"http","periodSeconds":10}`,
			},
		},
		{
			name:  "integer precision",
			patch: `{"metadata":{"generation":12345678901234567890},"spec":{"replicas":12345678901234}}`,
			check: map[string]string{
				"/metadata/generation": `12345678901234567890`,
				"/spec/replicas":       `12345678901234`,
			},
		},
		{
			name:  "new keyed element with nested directives is cleaned",
			patch: `{"spec":{"template":{"spec":{"initContainers":[{"name":"init","$setElementOrder/env":[{"name":"X"}],"env":[{"name":"X","value":"1"},{"$patch":"delete","name":"Y"}],"ports":[{"containerPort":1,"name":null}]}]}}}}`,
			check: map[string]string{
				"/spec/template/spec/initContainers": `[{"name":"init","env":[{"name":"X","value":"1"}],"ports":[{"containerPort":1}]}]`,
			},
		},
		{
			name:  "unknown fields merge like merge patch",
			patch: `{"spec":{"unknown":{"a":{"b":1,"c":null},"l":[{"$patch":"delete"},{"x":null}]}}}`,
			check: map[string]string{
				"/spec/unknown": `{"a":{"b":1},"l":[{"x":null}]}`,
			},
		},
		{
			name:  "root replace",
			patch: `{"$patch":"replace","kind":"Deployment","metadata":{"name":"d1"}}`,
			check: map[string]string{
				"": `{"kind":"Deployment","metadata":{"name":"d1"}}`,
			},
		},
	}
	schema, err := NewSchema(deploymentType)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := schema.StrategicMergePatch([]byte(liveDeployment), []byte(tt.patch))
			if err != nil {
				t.Fatalf("patch: %v", err)
			}
			if strings.Contains(string(got), `"$`) {
				t.Errorf("directive left in result: %s", got)
			}
			checkPointers(t, got, tt.check)
		})
	}
}

// checkPointers compares values at JSON pointers of doc with expectations.
func checkPointers(t *testing.T, doc []byte, want map[string]string) {
	t.Helper()
	root := mustDecode(t, doc)
	for ptr, w := range want {
		v, err := valueAt(root, ptr)
		if w == "<absent>" {
			if err == nil {
				t.Errorf("%s: present (%v), want absent", ptr, v)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v\ndocument: %s", ptr, err, doc)
			continue
		}
		g, _ := encode(v)
		if string(g) != canonical(t, w) {
			t.Errorf("%s:\n got: %s\nwant: %s", ptr, g, canonical(t, w))
		}
	}
}

func TestStrategicMergePatchCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		typ     reflect.Type
		doc     string
		patch   string
		want    string
		wantErr error
	}{
		{"nil type merges maps", nil, `{"a":{"b":1,"c":2},"l":[1,2]}`, `{"a":{"c":null,"d":3},"l":[3]}`, `{"a":{"b":1,"d":3},"l":[3]}`, nil},
		{"nil type strips directives", nil, `{"a":{"b":1}}`, `{"a":{"$patch":"replace","c":1},"$setElementOrder/l":[1],"l":[{"$patch":"replace"},{"k":1,"$retainKeys":["k"]}]}`, `{"a":{"c":1},"l":[{"k":1}]}`, nil},
		{"nil type delete map", nil, `{"a":{"b":1},"c":1}`, `{"a":{"$patch":"delete"}}`, `{"c":1}`, nil},
		{"root delete", deploymentType, `{"kind":"Deployment"}`, `{"$patch":"delete"}`, `{}`, nil},
		{"empty patch", deploymentType, `{"spec":{"replicas":12345678901234567890123}}`, `{}`, `{"spec":{"replicas":12345678901234567890123}}`, nil},
		{"keyed list created from nothing", deploymentType, `{}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b","$patch":"delete"}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`, nil},
		{"numeric merge key", deploymentType, `{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80.0,"name":"x"}]}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"protocol":"UDP"}]}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"x","protocol":"UDP"}]}]}}}}`, nil},
		{"map of structs merges values", deploymentType, `{"spec":{"template":{"spec":{"containers":[{"name":"a","lifecycle":{"x":{"name":"n","containerPort":1}}}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a","lifecycle":{"x":{"containerPort":2},"y":{"containerPort":3}}}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a","lifecycle":{"x":{"name":"n","containerPort":2},"y":{"containerPort":3}}}]}}}}`, nil},
		{"map[string]any is a leaf", deploymentType, `{"spec":{"template":{"spec":{"overhead":{"a":1,"b":2}}}}}`, `{"spec":{"template":{"spec":{"overhead":{"a":3}}}}}`, `{"spec":{"template":{"spec":{"overhead":{"a":3}}}}}`, nil},
		{"RawExtension is a leaf", deploymentType, `{"spec":{"template":{"spec":{"extra":{"a":1,"b":2}}}}}`, `{"spec":{"template":{"spec":{"extra":{"a":3}}}}}`, `{"spec":{"template":{"spec":{"extra":{"a":3}}}}}`, nil},
		{"type mismatch replaces", deploymentType, `{"spec":{"template":{"spec":{"containers":"x"}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`, nil},
		{"pointer type accepted", reflect.TypeFor[*testDeployment](), `{"metadata":{"finalizers":["a"]}}`, `{"metadata":{"finalizers":["b"]}}`, `{"metadata":{"finalizers":["b","a"]}}`, nil},
		// Malformed patches.
		{"patch not an object", deploymentType, `{}`, `[]`, "", ErrBadPatch},
		{"patch not JSON", deploymentType, `{}`, `{"a"`, "", ErrBadPatch},
		{"unknown map directive", deploymentType, `{}`, `{"spec":{"$patch":"explode"}}`, "", ErrBadPatch},
		{"unknown list directive", deploymentType, `{}`, `{"spec":{"template":{"spec":{"containers":[{"$patch":"merge"}]}}}}`, "", ErrBadPatch},
		{"missing merge key", deploymentType, `{}`, `{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}`, "", ErrBadPatch},
		{"delete without merge key", deploymentType, `{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"$patch":"delete"}]}}}}`, "", ErrBadPatch},
		{"delete in primitive list", deploymentType, `{}`, `{"metadata":{"finalizers":[{"$patch":"delete"}]}}`, "", ErrBadPatch},
		{"scalar in keyed list", deploymentType, `{}`, `{"spec":{"template":{"spec":{"containers":["a"]}}}}`, "", ErrBadPatch},
		{"retainKeys not a list", deploymentType, `{}`, `{"spec":{"strategy":{"$retainKeys":"type"}}}`, "", ErrBadPatch},
		{"retainKeys missing patch key", deploymentType, `{}`, `{"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":{}}}}`, "", ErrBadPatch},
		{"order not a list", deploymentType, `{}`, `{"metadata":{"$setElementOrder/finalizers":"a"}}`, "", ErrBadPatch},
		{"order entry without key", deploymentType, `{"spec":{"template":{"spec":{"containers":[{"name":"a"}]}}}}`, `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"image":"a"}]}}}}`, "", ErrBadPatch},
		{"deleteFromPrimitiveList not a list", deploymentType, `{}`, `{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}`, "", ErrBadPatch},
		// Bad documents.
		{"document not an object", deploymentType, `[]`, `{}`, "", ErrInvalidDocument},
		{"document not JSON", deploymentType, `{`, `{}`, "", ErrInvalidDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := StrategicMergePatch([]byte(tt.doc), []byte(tt.patch), tt.typ)
			check(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestStrategicMergePatchErrorNamesPath(t *testing.T) {
	t.Parallel()
	_, err := StrategicMergePatch([]byte(`{}`), []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","env":[{"value":"x"}]}]}}}}`), deploymentType)
	if !errors.Is(err, ErrBadPatch) {
		t.Fatalf("error = %v, want ErrBadPatch", err)
	}
	if !strings.Contains(err.Error(), "spec.template.spec.containers[name=c].env") {
		t.Fatalf("message %q does not name the path", err)
	}
}

func TestNewSchemaRejectsNonStruct(t *testing.T) {
	t.Parallel()
	for _, typ := range []reflect.Type{nil, reflect.TypeFor[map[string]any](), reflect.TypeFor[[]int]()} {
		if _, err := NewSchema(typ); err == nil {
			t.Errorf("NewSchema(%v) succeeded", typ)
		}
		if typ != nil {
			if _, err := StrategicMergePatch([]byte(`{}`), []byte(`{}`), typ); err == nil {
				t.Errorf("StrategicMergePatch with %v succeeded", typ)
			}
		}
	}
}

func TestSchemaConcurrentUse(t *testing.T) {
	t.Parallel()
	schema, err := NewSchema(deploymentType)
	if err != nil {
		t.Fatal(err)
	}
	p := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"c","env":[{"name":"Z","value":"z"}]}]}}}}`)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := schema.StrategicMergePatch([]byte(liveDeployment), p); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// Recursive types must not loop while the schema is learned.
type testNode struct {
	Name     string     `json:"name"`
	Children []testNode `json:"children,omitempty" patchStrategy:"merge" patchMergeKey:"name"`
	*testNode
}

func TestStrategicMergePatchRecursiveType(t *testing.T) {
	t.Parallel()
	got, err := StrategicMergePatch(
		[]byte(`{"name":"r","children":[{"name":"a","children":[{"name":"x"}]}]}`),
		[]byte(`{"children":[{"name":"a","children":[{"name":"y"}]}]}`),
		reflect.TypeFor[testNode]())
	check(t, got, err, `{"name":"r","children":[{"name":"a","children":[{"name":"y"},{"name":"x"}]}]}`, nil)
}

func BenchmarkStrategicMergePatch(b *testing.B) {
	schema, err := NewSchema(deploymentType)
	if err != nil {
		b.Fatal(err)
	}
	doc := []byte(liveDeployment)
	p := []byte(`{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{new}\n"}},
 "spec":{"replicas":2,"template":{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"sidecar"}],
   "containers":[{"$setElementOrder/env":[{"name":"B"},{"name":"K"}],"env":[{"name":"B","value":"2"},{"$patch":"delete","name":"A"}],"image":"nginx:1.26","name":"c"}]}}}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := schema.StrategicMergePatch(doc, p); err != nil {
			b.Fatal(err)
		}
	}
}
