package printers_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client/printers"
)

const podTable = `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},
"columnDefinitions":[{"name":"Name","type":"string","format":"name"},{"name":"Ready","type":"string"},
{"name":"Restarts","type":"integer"},{"name":"IP","type":"string","priority":1}],
"rows":[{"cells":["web-0","1/1",0,"10.0.0.1"],"object":{"kind":"PartialObjectMetadata","metadata":{"name":"web-0","namespace":"prod"}}},
{"cells":["web-10","0/1",12,null],"object":{"metadata":{"name":"web-10","namespace":"dev"}}}]}`

func TestTablePrinter(t *testing.T) {
	t.Parallel()
	tb, err := printers.DecodeTable([]byte(podTable))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		opts printers.TableOptions
		want string
	}{
		{"default", printers.TableOptions{}, "NAME     READY   RESTARTS\nweb-0    1/1     0\nweb-10   0/1     12\n"},
		{"wide", printers.TableOptions{Wide: true}, "NAME     READY   RESTARTS   IP\nweb-0    1/1     0          10.0.0.1\nweb-10   0/1     12         <none>\n"},
		{"namespaces and kind", printers.TableOptions{WithNamespace: true, KindPrefix: "pod"},
			"NAMESPACE   NAME         READY   RESTARTS\nprod        pod/web-0    1/1     0\ndev         pod/web-10   0/1     12\n"},
		{"no headers", printers.TableOptions{NoHeaders: true}, "web-0    1/1   0\nweb-10   0/1   12\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := printers.NewTablePrinter(tc.opts).Print(&b, tb); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// A second table (watch event) without columns: no second header.
	p := printers.NewTablePrinter(printers.TableOptions{})
	var b bytes.Buffer
	_ = p.Print(&b, tb)
	_ = p.Print(&b, &printers.Table{Rows: tb.Rows[:1]})
	if strings.Count(b.String(), "NAME") != 1 || strings.Count(b.String(), "web-0 ") != 2 {
		t.Errorf("watch output:\n%s", b.String())
	}
	if _, err := printers.DecodeTable([]byte(`{"kind":"PodList"}`)); err == nil {
		t.Error("DecodeTable accepted a PodList")
	}
}

func TestJSONPath(t *testing.T) {
	t.Parallel()
	obj, err := api.DecodeMap([]byte(`{"metadata":{"name":"web","labels":{"app":"x"}},
	"status":{"phase":"Running","replicas":3,"ratio":0.5,"conditions":[{"type":"Ready","status":"True"},{"type":"Synced","status":"False"}]},
	"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ tmpl, want string }{
		{"{.status.phase}", "Running"},
		{".status.phase", "Running"},
		{"status.replicas", "3"},
		{"{.status.ratio}", "0.5"},
		{"{$.metadata.labels}", `{"app":"x"}`},
		{"{.metadata.labels['app']}", "x"},
		{"{.items[*].metadata.name}", "a b"},
		{"{.items[-1].metadata.name}", "b"},
		{`{.status.conditions[?(@.type=="Ready")].status}`, "True"},
		{`{.status.conditions[?(@.status!='True')].type}`, "Synced"},
		{`{range .items[*]}{.metadata.name}{"\n"}{end}`, "a\nb\n"},
		{"name={.metadata.name}!", "name=web!"},
		{"{.missing.field}", ""},
		{"{.metadata.*}", `{"app":"x"} web`},
	}
	for _, tc := range cases {
		t.Run(tc.tmpl, func(t *testing.T) {
			t.Parallel()
			jp, err := printers.ParseJSONPath(tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := jp.Execute(&b, obj); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
	for _, bad := range []string{"{.a", "{range .items[*]}{.x}", "{end}", "{.a[x]}", "{..name}", "{.a[?(b==1)]}"} {
		if _, err := printers.ParseJSONPath(bad); err == nil {
			t.Errorf("ParseJSONPath(%q) succeeded", bad)
		}
	}
}

func TestObjectPrinters(t *testing.T) {
	t.Parallel()
	u := &api.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": int64(2)}}}
	var b bytes.Buffer
	_ = printers.Name(&b, u)
	_ = printers.JSON(&b, u.Object)
	_ = printers.YAML(&b, printers.List([]*api.Unstructured{u}))
	want := `deployment.apps/web
{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "web"
  },
  "spec": {
    "replicas": 2
  }
}
apiVersion: v1
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
  spec:
    replicas: 2
kind: List
metadata:
  resourceVersion: ""
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
