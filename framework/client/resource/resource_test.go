package resource_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/client/resource"
)

func names(objs []resource.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Object.GroupVersionKind().Kind+"/"+o.Object.GetName())
	}
	return out
}

func TestDecode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     []string
		wantErr  string
	}{
		{"one YAML", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", []string{"ConfigMap/a"}, ""},
		{"multi YAML with empties and comments", "---\n# c\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n--- # next\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n...\n---\n", []string{"ConfigMap/a", "Secret/b"}, ""},
		{"flow style with leading separator", "---\n{\n  apiVersion: v1,\n  kind: Namespace,\n  metadata: {name: dev,},\n}\n", []string{"Namespace/dev"}, ""},
		{"JSON object", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, []string{"ConfigMap/a"}, ""},
		{"JSON stream", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}`, []string{"ConfigMap/a", "ConfigMap/b"}, ""},
		{"JSON array", `[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]`, []string{"ConfigMap/a"}, ""},
		{"List", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: b}\n", []string{"ConfigMap/a", "Secret/b"}, ""},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", nil, "has no kind"},
		{"not an object", "- a\n- b\n", nil, "not an object"},
		{"bad YAML", "a: [\n", nil, "YAML document 1"},
		{"empty", "\n# nothing\n", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, err := resource.Decode("in.yaml", []byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "in.yaml") {
					t.Fatalf("err = %v, want one naming in.yaml and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, names(objs)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadDirectoriesAndOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.yaml", "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata: {name: f}\n")
	write("a.json", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.samplecontroller.k8s.io"}}`)
	write("README.md", "not a manifest")
	write("sub/ns.yml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n")

	objs, err := resource.Read(resource.Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"CustomResourceDefinition/foos.samplecontroller.k8s.io", "Foo/f"}, names(objs)); diff != "" {
		t.Errorf("without -R (-want +got):\n%s", diff)
	}
	objs, err = resource.Read(resource.Options{Paths: []string{dir}, Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	resource.SortForApply(objs)
	if diff := cmp.Diff([]string{"Namespace/ns", "CustomResourceDefinition/foos.samplecontroller.k8s.io", "Foo/f"}, names(objs)); diff != "" {
		t.Errorf("sorted (-want +got):\n%s", diff)
	}
	empty := t.TempDir()
	write2 := filepath.Join(empty, "deeper", "x.yaml")
	_ = os.MkdirAll(filepath.Dir(write2), 0o755)
	_ = os.WriteFile(write2, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n"), 0o644)
	_, err = resource.Read(resource.Options{Paths: []string{empty}})
	if !errors.Is(err, resource.ErrNoObjects) || !strings.Contains(err.Error(), "-R") {
		t.Errorf("err = %v, want ErrNoObjects with a -R hint", err)
	}
	objs, err = resource.Read(resource.Options{Paths: []string{resource.Stdin}, Stdin: strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: s}\n")})
	if err != nil || len(objs) != 1 || objs[0].Source != "-" {
		t.Errorf("stdin: %v %v", names(objs), err)
	}
}
