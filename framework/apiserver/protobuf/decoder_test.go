package protobuf

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/converge-dev/converge/framework/api"
)

// kubectlCreateNamespaceFoo is what kubectl 1.32 sends for
// `kubectl create namespace foo` (WIRE.md §11).
const kubectlCreateNamespaceFoo = "6b387300" +
	"0a0f" + "0a02" + "7631" + "1209" + "4e616d657370616365" +
	"121b" + "0a13" + "0a03" + "666f6f" + "1200" + "1a00" + "2200" + "2a00" + "3200" + "3800" + "4200" +
	"1200" + "1a02" + "0a00" +
	"1a00" + "2200"

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeKubectlNamespace(t *testing.T) {
	t.Parallel()
	var d Decoder
	tm, obj, err := d.Decode(mustHex(t, kubectlCreateNamespaceFoo), reflect.TypeFor[Namespace]())
	if err != nil {
		t.Fatal(err)
	}
	if want := (api.TypeMeta{APIVersion: "v1", Kind: "Namespace"}); tm != want {
		t.Errorf("type meta = %+v, want %+v", tm, want)
	}
	want := map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata":   map[string]any{"name": "foo", "creationTimestamp": nil},
		"spec":       map[string]any{},
		"status":     map[string]any{},
	}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("object (-want +got):\n%s", diff)
	}
}

type Phase string

type Inner struct {
	Name  string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Count int32  `json:"count,omitempty" protobuf:"varint,2,opt,name=count"`
}

// Flattened is embedded without a protobuf tag: its fields belong to the parent.
type Flattened struct {
	Extra string `json:"extra,omitempty" protobuf:"bytes,40,opt,name=extra"`
}

type FlattenedPtr struct {
	More []string `json:"more,omitempty" protobuf:"bytes,41,rep,name=more"`
}

type Everything struct {
	api.TypeMeta  `json:",inline"`
	Flattened     `json:",inline"`
	*FlattenedPtr `json:",inline"`
	Metadata      api.ObjectMeta              `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	Str           string                      `json:"str,omitempty" protobuf:"bytes,2,opt,name=str"`
	Strs          []string                    `json:"strs,omitempty" protobuf:"bytes,3,rep,name=strs"`
	Inner         Inner                       `json:"inner" protobuf:"bytes,4,opt,name=inner"`
	InnerPtr      *Inner                      `json:"innerPtr,omitempty" protobuf:"bytes,5,opt,name=innerPtr"`
	Inners        []Inner                     `json:"inners,omitempty" protobuf:"bytes,6,rep,name=inners"`
	Ints          []int32                     `json:"ints,omitempty" protobuf:"varint,7,rep,name=ints"`
	Longs         []int64                     `json:"longs,omitempty" protobuf:"varint,8,rep,name=longs"`
	Labels        map[string]string           `json:"labels,omitempty" protobuf:"bytes,9,rep,name=labels" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	Data          map[string][]byte           `json:"data,omitempty" protobuf:"bytes,10,rep,name=data"`
	Flag          bool                        `json:"flag,omitempty" protobuf:"varint,11,opt,name=flag"`
	FlagPtr       *bool                       `json:"flagPtr,omitempty" protobuf:"varint,12,opt,name=flagPtr"`
	Big           int64                       `json:"big,omitempty" protobuf:"varint,13,opt,name=big"`
	Neg           int32                       `json:"neg,omitempty" protobuf:"varint,14,opt,name=neg"`
	Unsigned      uint64                      `json:"unsigned,omitempty" protobuf:"varint,15,opt,name=unsigned"`
	When          api.Time                    `json:"when" protobuf:"bytes,16,opt,name=when"`
	WhenPtr       *api.Time                   `json:"whenPtr,omitempty" protobuf:"bytes,17,opt,name=whenPtr"`
	Micro         api.MicroTime               `json:"micro" protobuf:"bytes,18,opt,name=micro"`
	Dur           api.Duration                `json:"dur" protobuf:"bytes,19,opt,name=dur"`
	IntOrInt      api.IntOrString             `json:"intOrInt" protobuf:"bytes,20,opt,name=intOrInt"`
	IntOrStr      *api.IntOrString            `json:"intOrStr,omitempty" protobuf:"bytes,21,opt,name=intOrStr"`
	Qty           api.Quantity                `json:"qty" protobuf:"bytes,22,opt,name=qty"`
	Qtys          map[string]api.Quantity     `json:"qtys,omitempty" protobuf:"bytes,23,rep,name=qtys"`
	Raw           api.RawExtension            `json:"raw" protobuf:"bytes,24,opt,name=raw"`
	Ratio         float64                     `json:"ratio,omitempty" protobuf:"fixed64,25,opt,name=ratio"`
	Small         float32                     `json:"small,omitempty" protobuf:"fixed32,26,opt,name=small"`
	Zig           int64                       `json:"zig,omitempty" protobuf:"zigzag64,27,opt,name=zig"`
	Phase         Phase                       `json:"phase,omitempty" protobuf:"bytes,28,opt,name=phase,casttype=Phase"`
	Bytes         []byte                      `json:"bytes,omitempty" protobuf:"bytes,29,opt,name=bytes"`
	InnerMap      map[string]Inner            `json:"innerMap,omitempty" protobuf:"bytes,30,rep,name=innerMap"`
	InnerPtrMap   map[string]*Inner           `json:"innerPtrMap,omitempty" protobuf:"bytes,31,rep,name=innerPtrMap"`
	IntPtr        *int32                      `json:"intPtr,omitempty" protobuf:"varint,32,opt,name=intPtr"`
	Bools         []bool                      `json:"bools,omitempty" protobuf:"varint,33,rep,name=bools"`
	Doubles       []float64                   `json:"doubles,omitempty" protobuf:"fixed64,34,rep,name=doubles"`
	IntKeys       map[int32]string            `json:"intKeys,omitempty" protobuf:"bytes,35,rep,name=intKeys" protobuf_key:"varint,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	StrPtr        *string                     `json:"strPtr,omitempty" protobuf:"bytes,36,opt,name=strPtr"`
	Fields        *api.FieldsV1               `json:"fields,omitempty" protobuf:"bytes,37,opt,name=fields"`
	Times         []api.Time                  `json:"times,omitempty" protobuf:"bytes,38,rep,name=times"`
	Conditions    []api.Condition             `json:"conditions,omitempty" protobuf:"bytes,39,rep,name=conditions"`
	Selector      *api.LabelSelector          `json:"selector,omitempty" protobuf:"bytes,42,opt,name=selector"`
	Ignored       string                      `json:"ignored,omitempty" protobuf:"-"`
	NoTag         string                      `json:"noTag,omitempty"`
	Nested        map[string]api.RawExtension `json:"nested,omitempty" protobuf:"bytes,43,rep,name=nested"`
	// Extra is like authentication's map<string, ExtraValue>: each value a
	// message {repeated items = 1}.
	Extra map[string][]string `json:"extra,omitempty" protobuf:"bytes,44,rep,name=extra"`
}

func sampleEverything() *Everything {
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Everything{
		Flattened:    Flattened{Extra: "flat"},
		FlattenedPtr: &FlattenedPtr{More: []string{"m1", "m2"}},
		Metadata: api.ObjectMeta{
			Name: "all", Namespace: "ns", Generation: 9, CreationTimestamp: api.NewTime(at),
			DeletionTimestamp: api.NewTimePtr(at.Add(time.Hour)), DeletionGracePeriodSeconds: api.Ptr[int64](0),
			Labels: map[string]string{"a": "1", "b": ""}, Annotations: map[string]string{"x": "y"},
			OwnerReferences: []api.OwnerReference{{APIVersion: "v1", Kind: "K", Name: "o", UID: "u", Controller: api.Ptr(false)}},
			Finalizers:      []string{"f1", "f2"},
			ManagedFields: []api.ManagedFieldsEntry{{
				Manager: "kubectl", Operation: "Update", APIVersion: "v1", Time: api.NewTimePtr(at), FieldsType: "FieldsV1",
				FieldsV1: &api.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)},
			}},
		},
		Str:         "hello, 世界",
		Strs:        []string{"a", "", "c"},
		Inner:       Inner{Name: "in", Count: -7},
		InnerPtr:    &Inner{},
		Inners:      []Inner{{Name: "x", Count: 1}, {Name: "y", Count: 2}},
		Ints:        []int32{1, -1, 0, 2147483647, -2147483648},
		Longs:       []int64{1 << 40, -(1 << 50)},
		Labels:      map[string]string{"k": "v", "empty": ""},
		Data:        map[string][]byte{"bin": {0, 1, 2, 255}, "empty": {}},
		Flag:        true,
		FlagPtr:     api.Ptr(false),
		Big:         -9000000000,
		Neg:         -5,
		Unsigned:    1 << 63,
		When:        api.NewTime(at),
		WhenPtr:     api.NewTimePtr(at.Add(-time.Hour)),
		Micro:       api.MicroTime{Time: at.Add(123456 * time.Microsecond)},
		Dur:         api.Duration{Duration: 90 * time.Second},
		IntOrInt:    api.FromInt(42),
		IntOrStr:    api.Ptr(api.FromString("25%")),
		Qty:         api.Quantity{S: "1.5Gi"},
		Qtys:        map[string]api.Quantity{"cpu": {S: "250m"}},
		Raw:         api.RawExtension{Raw: []byte(`{"kind":"X","n":1}`)},
		Ratio:       3.25,
		Small:       -1.5,
		Zig:         -123456789,
		Phase:       "Active",
		Bytes:       []byte("raw bytes"),
		InnerMap:    map[string]Inner{"one": {Name: "1", Count: 1}},
		InnerPtrMap: map[string]*Inner{"p": {Name: "ptr"}},
		IntPtr:      api.Ptr[int32](0),
		Bools:       []bool{true, false, true},
		Doubles:     []float64{0.5, -2},
		IntKeys:     map[int32]string{-3: "minus three", 7: "seven"},
		StrPtr:      api.Ptr(""),
		Fields:      &api.FieldsV1{Raw: []byte(`{"f:spec":{}}`)},
		Times:       []api.Time{api.NewTime(at), api.NewTime(at.Add(time.Second))},
		Conditions: []api.Condition{{
			Type: "Ready", Status: "True", ObservedGeneration: 2, LastTransitionTime: api.NewTime(at), Reason: "R", Message: "M",
		}},
		Selector: &api.LabelSelector{MatchExpressions: []api.LabelSelectorRequirement{{Key: "k", Operator: "Exists"}}},
		Nested:   map[string]api.RawExtension{"obj": {Raw: []byte(`{"a":[1,2]}`)}},
		Extra:    map[string][]string{"scopes": {"a", "b"}, "one": {"x"}},
	}
}

var cmpOpts = cmp.Options{cmpopts.EquateEmpty()}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   any
	}{
		{"everything", sampleEverything()},
		{"empty", &Everything{}},
		{"deployment", sampleDeployment()},
		{"configmap", &ConfigMap{
			Metadata:   api.ObjectMeta{Name: "cm", Namespace: "default"},
			Data:       map[string]string{"a": "1", "b": "two"},
			BinaryData: map[string][]byte{"bin": {0, 1, 2}},
			Immutable:  api.Ptr(true),
		}},
		{"delete options", &api.DeleteOptions{
			GracePeriodSeconds: api.Ptr[int64](0),
			Preconditions:      &api.Preconditions{UID: api.Ptr("u-1"), ResourceVersion: api.Ptr("7")},
			OrphanDependents:   api.Ptr(false),
			PropagationPolicy:  api.Ptr("Foreground"),
			DryRun:             []string{"All"},
		}},
	}
	for _, tc := range cases {
		// Each case is encoded by the test encoder (repeated scalars unpacked,
		// as gogo writes them, and packed) and by Decoder.Marshal.
		for _, enc := range []string{"unpacked", "packed", "marshal"} {
			name := tc.name + "/" + enc
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var d Decoder
				raw := testEncoder{packed: enc == "packed"}.marshal(tc.in)
				if enc == "marshal" {
					var err error
					if raw, err = d.Marshal(tc.in); err != nil {
						t.Fatal(err)
					}
				}
				typ := reflect.TypeOf(tc.in).Elem()

				// Bare message into a Go value.
				got := reflect.New(typ)
				if err := d.DecodeInto(raw, got.Interface()); err != nil {
					t.Fatal(err)
				}
				want := reflect.New(typ)
				want.Elem().Set(reflect.ValueOf(tc.in).Elem())
				want.Elem().FieldByName("TypeMeta").Set(reflect.Zero(typeTypeMeta))
				if diff := cmp.Diff(want.Interface(), got.Interface(), cmpOpts); diff != "" {
					t.Errorf("DecodeInto (-want +got):\n%s", diff)
				}

				// Enveloped body into a JSON map, compared with encoding/json's view.
				tm, obj, err := d.Decode(envelope("test/v1", "Thing", raw), typ)
				if err != nil {
					t.Fatal(err)
				}
				if tm.APIVersion != "test/v1" || tm.Kind != "Thing" {
					t.Errorf("type meta = %+v", tm)
				}
				js, err := json.Marshal(want.Interface())
				if err != nil {
					t.Fatal(err)
				}
				wantObj, err := api.DecodeMap(js)
				if err != nil {
					t.Fatal(err)
				}
				wantObj["apiVersion"], wantObj["kind"] = "test/v1", "Thing"
				if diff := cmp.Diff(wantObj, obj); diff != "" {
					t.Errorf("Decode (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestDecodeConfigMapJSON(t *testing.T) {
	t.Parallel()
	in := &ConfigMap{
		Metadata:   api.ObjectMeta{Name: "cm", Namespace: "default", Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"a": "1", "empty": ""},
		BinaryData: map[string][]byte{"bin": {0, 1, 2}, "none": nil},
		Immutable:  api.Ptr(true),
	}
	var d Decoder
	_, obj, err := d.Decode(envelope("v1", "ConfigMap", testEncoder{}.marshal(in)), reflect.TypeFor[ConfigMap]())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata":   map[string]any{"name": "cm", "namespace": "default", "labels": map[string]any{"app": "x"}, "creationTimestamp": nil},
		"data":       map[string]any{"a": "1", "empty": ""},
		"binaryData": map[string]any{"bin": "AAEC", "none": ""},
		"immutable":  true,
	}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeDeploymentJSON(t *testing.T) {
	t.Parallel()
	var d Decoder
	_, obj, err := d.Decode(envelope("apps/v1", "Deployment", testEncoder{}.marshal(sampleDeployment())), reflect.TypeFor[*Deployment]())
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"metadata", "creationTimestamp"}, "2025-03-04T05:06:07Z"},
		{[]string{"spec", "replicas"}, int64(3)},
		{[]string{"spec", "strategy", "rollingUpdate", "maxSurge"}, "25%"},
		{[]string{"spec", "strategy", "rollingUpdate", "maxUnavailable"}, int64(1)},
		{[]string{"spec", "template", "spec", "restartPolicy"}, "Always"},
		{[]string{"status", "conditions"}, []any{map[string]any{
			"type": "Available", "status": "True", "lastTransitionTime": "2025-03-04T05:07:07Z",
			"reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
		}}},
	}
	for _, c := range checks {
		got, ok := api.NestedField(obj, c.path...)
		if !ok {
			t.Errorf("%s: missing", strings.Join(c.path, "."))
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", strings.Join(c.path, "."), diff)
		}
	}
	containers := api.NestedSlice(obj, "spec", "template", "spec", "containers")
	if len(containers) != 2 {
		t.Fatalf("containers = %v", containers)
	}
	c0 := containers[0].(map[string]any)
	if diff := cmp.Diff(map[string]any{"cpu": "500m", "memory": "256Mi"}, c0["resources"].(map[string]any)["limits"]); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	probe := c0["readinessProbe"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"path": "/healthz", "port": "http"}, probe["httpGet"]); diff != "" {
		t.Errorf("inline probe handler (-want +got):\n%s", diff)
	}
	vols := api.NestedSlice(obj, "spec", "template", "spec", "volumes")
	if diff := cmp.Diff([]any{
		map[string]any{"name": "cache", "emptyDir": map[string]any{"sizeLimit": "1Gi"}},
		map[string]any{"name": "config", "configMap": map[string]any{"name": "web-config", "defaultMode": int64(0o644)}},
	}, vols); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
}

// unknownFields appends one field of every wire type with numbers the test
// types do not use.
func unknownFields(b []byte) []byte {
	b = protowire.AppendTag(b, 900, protowire.VarintType)
	b = protowire.AppendVarint(b, 1<<60)
	b = protowire.AppendTag(b, 901, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 7)
	b = protowire.AppendTag(b, 902, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 7)
	b = protowire.AppendTag(b, 903, protowire.BytesType)
	b = protowire.AppendString(b, "ignored")
	b = protowire.AppendTag(b, 904, protowire.StartGroupType)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 904, protowire.EndGroupType)
	return b
}

func TestUnknownFieldsSkipped(t *testing.T) {
	t.Parallel()
	// Unknown fields before, between and after known ones, at the top level,
	// inside nested messages, map entries, special types and the envelope.
	var meta []byte
	meta = unknownFields(meta)
	meta = protowire.AppendTag(meta, 1, protowire.BytesType)
	meta = protowire.AppendString(meta, "foo")
	var entry []byte
	entry = unknownFields(entry)
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, "k")
	entry = protowire.AppendTag(entry, 2, protowire.BytesType)
	entry = protowire.AppendString(entry, "v")
	entry = unknownFields(entry)
	meta = protowire.AppendTag(meta, 11, protowire.BytesType)
	meta = protowire.AppendBytes(meta, entry)
	var ts []byte
	ts = protowire.AppendTag(ts, 1, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 1700000000)
	ts = unknownFields(ts)
	meta = protowire.AppendTag(meta, 8, protowire.BytesType)
	meta = protowire.AppendBytes(meta, ts)
	meta = unknownFields(meta)

	var raw []byte
	raw = unknownFields(raw)
	raw = protowire.AppendTag(raw, 1, protowire.BytesType)
	raw = protowire.AppendBytes(raw, meta)
	raw = unknownFields(raw)

	body := envelope("v1", "Namespace", raw)
	body = unknownFields(body)

	var d Decoder
	_, obj, err := d.Decode(body, reflect.TypeFor[Namespace]())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{
			"name": "foo", "labels": map[string]any{"k": "v"},
			"creationTimestamp": time.Unix(1700000000, 0).UTC().Format(time.RFC3339),
		},
		"spec": map[string]any{}, "status": map[string]any{},
	}
	if diff := cmp.Diff(want, obj); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestUnwrap(t *testing.T) {
	t.Parallel()
	env, err := Unwrap(mustHex(t, kubectlCreateNamespaceFoo))
	if err != nil {
		t.Fatal(err)
	}
	if env.TypeMeta.Kind != "Namespace" || env.TypeMeta.APIVersion != "v1" || len(env.Raw) != 0x1b ||
		env.ContentType != "" || env.ContentEncoding != "" {
		t.Errorf("envelope = %+v", env)
	}
}

// Recursive is a self-referencing type, like JSONSchemaProps.
type Recursive struct {
	Name  string      `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	Child *Recursive  `json:"child,omitempty" protobuf:"bytes,2,opt,name=child"`
	Items []Recursive `json:"items,omitempty" protobuf:"bytes,3,rep,name=items"`
}

type BadInterface struct {
	V any `protobuf:"bytes,1,opt,name=v"`
}

type BadDuplicate struct {
	A string `protobuf:"bytes,1,opt,name=a"`
	B string `protobuf:"bytes,1,opt,name=b"`
}

type BadTag struct {
	A string `protobuf:"bytes,x,opt,name=a"`
}

func nest(depth int) []byte {
	var b []byte
	for range depth {
		var outer []byte
		outer = protowire.AppendTag(outer, 2, protowire.BytesType)
		outer = protowire.AppendBytes(outer, b)
		b = outer
	}
	return b
}

func TestRecursiveType(t *testing.T) {
	t.Parallel()
	var d Decoder
	in := &Recursive{Name: "a", Child: &Recursive{Name: "b", Child: &Recursive{Name: "c"}}, Items: []Recursive{{Name: "d", Items: []Recursive{{Name: "e"}}}}}
	var got Recursive
	if err := d.DecodeInto(testEncoder{}.marshal(in), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, &got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := d.DecodeInto(nest(MaxDepth), &got); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	err := d.DecodeInto(nest(MaxDepth+2), &got)
	if !errors.Is(err, errTooDeep) {
		t.Errorf("depth %d: err = %v, want %v", MaxDepth+2, err, errTooDeep)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	str := func(num protowire.Number, s string) []byte {
		b := protowire.AppendTag(nil, num, protowire.BytesType)
		return protowire.AppendString(b, s)
	}
	varint := func(num protowire.Number, v uint64) []byte {
		b := protowire.AppendTag(nil, num, protowire.VarintType)
		return protowire.AppendVarint(b, v)
	}
	// Deployment.spec.template.spec.containers[0].name with a truncated length.
	badContainer := str(2, string(str(3, string(str(2, string(str(2, "\x0a\xff")))))))
	cases := []struct {
		name string
		body []byte
		typ  reflect.Type
		want string
	}{
		{"no magic", []byte(`{"kind":"Namespace"}`), reflect.TypeFor[Namespace](), "does not start with the k8s protobuf prefix"},
		{"empty", nil, reflect.TypeFor[Namespace](), "does not start with the k8s protobuf prefix"},
		{"truncated envelope", mustHex(t, kubectlCreateNamespaceFoo)[:20], reflect.TypeFor[Namespace](), "parse envelope"},
		{"content encoding", append(envelope("v1", "Namespace", nil), str(3, "gzip")...), reflect.TypeFor[Namespace](), `unsupported content encoding "gzip"`},
		{"string as varint", envelope("v1", "Namespace", append(str(1, ""), varint(2, 1)...)), reflect.TypeFor[Namespace](), "spec: wire type 0 cannot hold"},
		{"nested wrong wire", envelope("v1", "Namespace", varint(1, 1)), reflect.TypeFor[Namespace](), "metadata: wire type 0"},
		{"bad nested", envelope("v1", "Namespace", str(1, "\x0a\x05ab")), reflect.TypeFor[Namespace](), "metadata.name: unexpected EOF"},
		{"bad element", envelope("apps/v1", "Deployment", badContainer), reflect.TypeFor[Deployment](), "spec.template.spec.containers[0].name"},
		{"number as string", envelope("v1", "X", str(13, "x")), reflect.TypeFor[Everything](), "big: wire type 2"},
		{"interface field", envelope("v1", "X", nil), reflect.TypeFor[BadInterface](), "unsupported type interface {}"},
		{"duplicate numbers", envelope("v1", "X", nil), reflect.TypeFor[BadDuplicate](), "share protobuf number 1"},
		{"bad tag", envelope("v1", "X", nil), reflect.TypeFor[BadTag](), "malformed field number"},
		{"not a struct", envelope("v1", "X", nil), reflect.TypeFor[string](), "not a struct"},
		{"invalid raw json", envelope("v1", "X", str(24, string(str(1, "{")))), reflect.TypeFor[Everything](), "encode as json"},
		{"field zero", envelope("v1", "X", []byte{0x00, 0x01}), reflect.TypeFor[Everything](), "invalid field number"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var d Decoder
			_, _, err := d.Decode(tc.body, tc.typ)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	var d Decoder
	if err := d.DecodeInto(nil, Namespace{}); err == nil {
		t.Error("DecodeInto(non-pointer) = nil error")
	}
}

func TestTruncationsNeverPanic(t *testing.T) {
	t.Parallel()
	var d Decoder
	body := envelope("apps/v1", "Deployment", testEncoder{}.marshal(sampleDeployment()))
	errs := 0
	for i := range body {
		if _, _, err := d.Decode(body[:i], reflect.TypeFor[Deployment]()); err != nil {
			errs++
		}
	}
	// Only cuts at a field boundary after raw can succeed.
	if errs < len(body)-4 {
		t.Errorf("%d of %d truncations failed, want nearly all", errs, len(body))
	}
}

func TestConcurrentDecode(t *testing.T) {
	t.Parallel()
	var d Decoder
	body := envelope("apps/v1", "Deployment", testEncoder{}.marshal(sampleDeployment()))
	done := make(chan error)
	for range 8 {
		go func() {
			_, _, err := d.Decode(body, reflect.TypeFor[Deployment]())
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

type SparseList struct {
	Metadata api.ListMeta `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	Far      string       `json:"far,omitempty" protobuf:"bytes,1000,opt,name=far"`
	Count    int64        `json:"count,omitempty" protobuf:"varint,2,opt,name=count"`
}

func TestLenientWireTypesAndSparseNumbers(t *testing.T) {
	t.Parallel()
	// ListMeta.remainingItemCount is tagged "bytes" but sent as a varint;
	// numeric fields also accept fixed64/fixed32; field 1000 uses the map lookup.
	var meta []byte
	meta = protowire.AppendTag(meta, 4, protowire.VarintType)
	meta = protowire.AppendVarint(meta, 12)
	var raw []byte
	raw = protowire.AppendTag(raw, 1, protowire.BytesType)
	raw = protowire.AppendBytes(raw, meta)
	raw = protowire.AppendTag(raw, 1000, protowire.BytesType)
	raw = protowire.AppendString(raw, "far away")
	raw = protowire.AppendTag(raw, 2, protowire.Fixed64Type)
	raw = protowire.AppendFixed64(raw, 1<<40)
	var got SparseList
	var d Decoder
	if err := d.DecodeInto(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := SparseList{Metadata: api.ListMeta{RemainingItemCount: api.Ptr[int64](12)}, Far: "far away", Count: 1 << 40}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The envelope's fields are all length-delimited: another wire type is malformed,
// not an unknown field to skip (a body of only a group used to decode as an
// empty object).
func TestUnwrapRejectsWrongWireTypes(t *testing.T) {
	t.Parallel()
	for name, rest := range map[string][]byte{
		"typeMeta as a group":  {0x0b, 0x0c},
		"typeMeta as a varint": {0x08, 0x01},
		"raw as fixed32":       {0x15, 1, 2, 3, 4},
		"kind as a varint":     {0x0a, 0x02, 0x10, 0x01},
	} {
		if _, err := Unwrap(append(Magic[:], rest...)); err == nil {
			t.Errorf("%s: Unwrap accepted % x", name, rest)
		}
	}
	// Unknown field numbers are still skipped, whatever their wire type.
	if _, err := Unwrap(append(Magic[:], 0x28, 0x01, 0x33, 0x34)); err != nil {
		t.Errorf("unknown fields: %v", err)
	}
}
