package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
)

// JSON writes v as indented JSON (two spaces, keys sorted) and a newline.
func JSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("print JSON: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// YAML writes v as YAML.
func YAML(w io.Writer, v any) error {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("print YAML: %w", err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		return fmt.Errorf("print YAML: %w", err)
	}
	_, err = w.Write(y)
	return err
}

// YAMLDocuments writes each object as a YAML document, separated by "---".
func YAMLDocuments(w io.Writer, objs []*api.Unstructured) error {
	for i, o := range objs {
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if err := YAML(w, o.Object); err != nil {
			return err
		}
	}
	return nil
}

// List wraps objects in a v1 List, the way kubectl prints several objects as
// one JSON or YAML document.
func List(objs []*api.Unstructured) map[string]any {
	items := make([]any, len(objs))
	for i, o := range objs {
		items[i] = o.Object
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items}
}

// ResourceName is kubectl's "-o name" form of a kind: "configmap",
// "deployment.apps", "foo.samplecontroller.k8s.io".
func ResourceName(gvk api.GroupVersionKind) string {
	k := strings.ToLower(gvk.Kind)
	if gvk.Group == "" {
		return k
	}
	return k + "." + gvk.Group
}

// Name writes "KIND[.GROUP]/NAME" for obj and a newline.
func Name(w io.Writer, obj *api.Unstructured) error {
	_, err := fmt.Fprintf(w, "%s/%s\n", ResourceName(obj.GroupVersionKind()), obj.GetName())
	return err
}
