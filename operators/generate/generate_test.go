package generate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/crd"
	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/generate"
	"github.com/converge-dev/converge/testenv"
)

// TestCorpus generates the CRDs of testdata/everything (every CRD-level
// marker), checks them against the CRD registry's validation, installs them
// in a control plane and checks that the schema does there what the markers
// say (defaults, CEL rules, scale subresource).
func TestCorpus(t *testing.T) {
	t.Parallel()
	res, err := generate.Generate(t.Context(), generate.Options{Patterns: []string{"./testdata/everything/..."}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.CRDs) != 2 {
		t.Fatalf("got %d CRDs, want gadgets and widgets", len(res.CRDs))
	}
	gadgets, widgets := res.CRDs[0], res.CRDs[1]
	for _, c := range res.CRDs {
		if errs := crd.Validate(&c); len(errs) > 0 {
			t.Errorf("CRD %s is not valid: %v", c.Metadata.Name, errs)
		}
	}

	// CRD-level markers.
	n := widgets.Spec.Names
	if widgets.Metadata.Name != "widgets.corpus.converge.dev" || n.Plural != "widgets" || n.Singular != "widget" ||
		!slices.Equal(n.ShortNames, []string{"wd", "wdg"}) || !slices.Equal(n.Categories, []string{"all", "corpus"}) ||
		widgets.Spec.Scope != "Namespaced" || n.ListKind != "WidgetList" {
		t.Errorf("+kubebuilder:resource: %+v scope %s", n, widgets.Spec.Scope)
	}
	if len(widgets.Spec.Versions) != 1 || widgets.Spec.Versions[0].Name != "v1" {
		t.Fatalf("+kubebuilder:skipversion: versions %+v", widgets.Spec.Versions)
	}
	v := widgets.Spec.Versions[0]
	if !v.Storage || !v.Served || v.Subresources == nil || v.Subresources.Status == nil || v.Subresources.Scale == nil ||
		v.Subresources.Scale.SpecReplicasPath != ".spec.replicas" || *v.Subresources.Scale.LabelSelectorPath != ".status.selector" {
		t.Errorf("subresources: %+v", v.Subresources)
	}
	cols := v.AdditionalPrinterColumns
	if len(cols) != 3 || cols[0].Name != "Replicas" || cols[0].JSONPath != ".spec.replicas" || cols[1].Priority != 1 ||
		cols[1].Description != "lifecycle phase" || cols[2].Type != "date" {
		t.Errorf("+kubebuilder:printcolumn: %+v", cols)
	}
	if d := v.Schema.OpenAPIV3Schema.Description; d != "Widget exercises every marker.\n\nIt has a second paragraph." {
		t.Errorf("description %q", d)
	}
	if gadgets.Spec.Scope != "Cluster" || len(gadgets.Spec.Versions) != 2 {
		t.Fatalf("gadgets: scope %s, %d versions", gadgets.Spec.Scope, len(gadgets.Spec.Versions))
	}
	g1, g2 := gadgets.Spec.Versions[0], gadgets.Spec.Versions[1]
	if g1.Storage || !g2.Storage || !g1.Deprecated || g1.DeprecationWarning == nil ||
		len(g1.SelectableFields) != 1 || g1.SelectableFields[0].JSONPath != ".spec.color" {
		t.Errorf("+kubebuilder:storageversion/deprecatedversion/selectablefield: v1 %+v v2 storage %v", g1, g2.Storage)
	}
	if gadgets.Metadata.Annotations["corpus.converge.dev/note"] != "generated" || gadgets.Metadata.Labels["corpus"] != "yes" {
		t.Errorf("+kubebuilder:metadata: %+v", gadgets.Metadata)
	}
	if req := g2.Schema.OpenAPIV3Schema.Properties["spec"].Required; !slices.Equal(req, []string{"color"}) {
		t.Errorf("package +kubebuilder:validation:Optional: required %v, want [color]", req)
	}

	// RBAC.
	if len(res.ClusterRoles) != 1 || res.ClusterRoles[0].Name != "manager-role" || len(res.Roles) != 1 ||
		res.Roles[0].Namespace != "system" || res.Roles[0].Name != "leader-election" {
		t.Fatalf("roles: %+v %+v", res.ClusterRoles, res.Roles)
	}
	rules := res.ClusterRoles[0].Rules
	if len(rules) != 5 || !slices.Equal(rules[1].APIGroups, []string{""}) || !slices.Equal(rules[1].Resources, []string{"configmaps", "secrets"}) ||
		!slices.Equal(rules[2].Verbs, []string{"*"}) || !slices.Equal(rules[0].NonResourceURLs, []string{"/metrics"}) {
		t.Errorf("rules: %+v", rules)
	}

	// Written as controller-gen names the files, and read back the same.
	dir := t.TempDir()
	files, err := res.Write(filepath.Join(dir, "crd"), filepath.Join(dir, "rbac"))
	if err != nil || len(files) != 3 {
		t.Fatalf("Write: %v %v", files, err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "crd", "corpus.converge.dev_widgets.yaml"))
	if err != nil || !strings.HasPrefix(string(raw), "---\napiVersion: apiextensions.k8s.io/v1\n") || regexp.MustCompile(`(?m)^status:`).Match(raw) {
		t.Fatalf("widgets YAML: %v\n%s", err, raw)
	}
	var back crdapi.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &back); err != nil || back.Metadata.Name != widgets.Metadata.Name {
		t.Fatalf("read back: %v", err)
	}

	// The control plane accepts them and the schema works.
	env := testenv.StartT(t, testenv.Options{})
	cfg, _, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, f := range files[:2] {
		b, _ := os.ReadFile(f)
		docs = append(docs, b)
	}
	ctx := t.Context()
	if err := operators.ApplyCRDs(ctx, c, docs, 0); err != nil {
		t.Fatalf("apply generated CRDs: %v", err)
	}
	w := &api.Unstructured{Object: map[string]any{"apiVersion": "corpus.converge.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "w"},
		"spec":     map[string]any{"name": "w", "owner": "me", "tags": []any{"a"}}}}
	if err := c.Create(ctx, w); err != nil {
		t.Fatalf("create a valid Widget: %v", err)
	}
	spec := api.NestedMap(w.Object, "spec")
	if spec["replicas"] != int64(1) && spec["replicas"] != float64(1) || spec["mode"] != "safe" || spec["port"] == nil {
		t.Errorf("defaults not applied: %v", spec)
	}
	for wantErr, spec := range map[string]map[string]any{
		"spec.name":                            {"name": "Bad_Name", "owner": "me", "mode": "slow"},
		"spec.mode":                            {"name": "b", "owner": "me", "mode": "slow"},
		"minReplicas must not exceed replicas": {"name": "b", "owner": "me", "replicas": 1, "minReplicas": 5},
		"immutable":                            {"name": "b", "owner": "me", "immutable": "x"},
	} {
		bad := &api.Unstructured{Object: map[string]any{"apiVersion": "corpus.converge.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"namespace": "default", "name": "bad"}, "spec": spec}}
		err := c.Create(ctx, bad)
		if wantErr == "immutable" {
			// A transition rule is not checked on create.
			if err != nil {
				t.Errorf("create with a transition rule: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("invalid Widget: error %v does not name %s", err, wantErr)
		}
	}
}

// TestErrorsNameTheMarker checks that a bad marker in a kind's package is
// reported with its file and line, and nothing is returned as valid.
func TestErrorsNameTheMarker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module bad\n\ngo 1.26\n",
		"v1/types.go": "// +groupName=bad.example.com\npackage v1\n\n// T is bad.\ntype T struct {\n\t// +kubebuilder:validation:MinItems=1\n\tF string `json:\"f\"`\n}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// T has no TypeMeta: it is not a kind, so its schema is not built.
	if _, err := generate.Generate(t.Context(), generate.Options{Dir: dir}); err != nil {
		t.Fatalf("a non-kind type was checked: %v", err)
	}
	kind := "// +groupName=bad.example.com\npackage v1\n\ntype Meta struct{}\n\n// K is a kind.\ntype K struct {\n\tF []string `json:\"f\"`\n\t// +kubebuilder:validation:MinItems=x\n\tG []string `json:\"g\"`\n\t// +kubebuilder:validation:Pattern=`^a`\n\tH int32 `json:\"h\"`\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "v1", "types.go"), []byte(kind), 0o644); err != nil {
		t.Fatal(err)
	}
	// The marker syntax error is found when the file is read, even though K
	// is not a kind (no TypeMeta).
	_, err := generate.Generate(t.Context(), generate.Options{Dir: dir})
	file := filepath.Join(dir, "v1", "types.go")
	if err == nil || !strings.Contains(err.Error(), file+":9:") || !strings.Contains(err.Error(), "expected an integer") {
		t.Fatalf("error %v does not name %s:9", err, file)
	}
}

// TestPostgresMarkers checks that the markers on the postgres operator's
// types say what its hand-written CRDs say: every validation keyword of the
// YAML is in the generated schema with the same value, and the names,
// subresources and printer columns are the same.
func TestPostgresMarkers(t *testing.T) {
	t.Parallel()
	res, err := generate.Generate(t.Context(), generate.Options{Patterns: []string{"../postgres"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.CRDs) != 2 {
		t.Fatalf("%d CRDs", len(res.CRDs))
	}
	for i, file := range []string{"crd_backup.yaml", "crd_cluster.yaml"} {
		raw, err := os.ReadFile(filepath.Join("..", "postgres", file))
		if err != nil {
			t.Fatal(err)
		}
		var hand crdapi.CustomResourceDefinition
		if err := yaml.Unmarshal(raw, &hand); err != nil {
			t.Fatal(err)
		}
		gen := res.CRDs[i]
		if errs := crd.Validate(&gen); len(errs) > 0 {
			t.Errorf("%s: %v", gen.Metadata.Name, errs)
		}
		hv, gv := hand.Spec.Versions[0], gen.Spec.Versions[0]
		if !reflect.DeepEqual(hand.Spec.Names, gen.Spec.Names) || !reflect.DeepEqual(hv.Subresources, gv.Subresources) ||
			!reflect.DeepEqual(hv.AdditionalPrinterColumns, gv.AdditionalPrinterColumns) || hv.Name != gv.Name {
			t.Errorf("%s: names, subresources or columns differ:\n hand %+v %+v %+v\n  gen %+v %+v %+v", file, hand.Spec.Names,
				hv.Subresources, hv.AdditionalPrinterColumns, gen.Spec.Names, gv.Subresources, gv.AdditionalPrinterColumns)
		}
		compareKeywords(t, file, "", toMap(t, hv.Schema.OpenAPIV3Schema), toMap(t, gv.Schema.OpenAPIV3Schema))
	}
}

func toMap(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func compareKeywords(t *testing.T, file, path string, hand, gen map[string]any) {
	t.Helper()
	for _, k := range []string{"type", "format", "default", "minimum", "maximum", "pattern", "enum", "minLength", "x-kubernetes-validations"} {
		if hv, ok := hand[k]; ok && !reflect.DeepEqual(hv, gen[k]) {
			t.Errorf("%s %s: %s is %v by hand, %v generated", file, path, k, hv, gen[k])
		}
	}
	if hand["x-kubernetes-preserve-unknown-fields"] == true {
		return // hand-written as free-form (conditions): the types say more
	}
	for name, hp := range asMap(hand["properties"]) {
		gp, ok := asMap(gen["properties"])[name].(map[string]any)
		if !ok {
			t.Errorf("%s %s.%s: missing from the generated schema", file, path, name)
			continue
		}
		compareKeywords(t, file, path+"."+name, hp.(map[string]any), gp)
	}
	if hi, ok := asMap(hand["items"]), asMap(gen["items"]); len(hi) > 0 {
		compareKeywords(t, file, path+"[]", hi, ok)
	}
	if ha := asMap(hand["additionalProperties"]); len(ha) > 0 {
		compareKeywords(t, file, path+"{}", ha, asMap(gen["additionalProperties"]))
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
