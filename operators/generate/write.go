package generate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// YAML renders objects as a YAML stream, each document starting with "---"
// as controller-gen writes them, without status and without a null
// metadata.creationTimestamp.
func YAML(objs ...any) ([]byte, error) {
	var out []byte
	for _, o := range objs {
		raw, err := json.Marshal(o)
		if err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		delete(m, "status")
		if meta, ok := m["metadata"].(map[string]any); ok {
			if meta["creationTimestamp"] == nil {
				delete(meta, "creationTimestamp")
			}
		}
		y, err := yaml.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode: %w", err)
		}
		out = append(out, "---\n"...)
		out = append(out, y...)
	}
	return out, nil
}

// Write writes each CRD to crdDir/<group>_<plural>.yaml and the roles to
// rbacDir/role.yaml (controller-gen's file names), creating the
// directories. An empty directory skips that part. It returns the files
// written.
func (r *Result) Write(crdDir, rbacDir string) ([]string, error) {
	var files []string
	write := func(dir, name string, objs ...any) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		data, err := YAML(objs...)
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		files = append(files, path)
		return nil
	}
	if crdDir != "" {
		for _, c := range r.CRDs {
			if err := write(crdDir, c.Spec.Group+"_"+c.Spec.Names.Plural+".yaml", c); err != nil {
				return files, err
			}
		}
	}
	if rbacDir != "" && len(r.ClusterRoles)+len(r.Roles) > 0 {
		var objs []any
		for _, c := range r.ClusterRoles {
			objs = append(objs, c)
		}
		for _, c := range r.Roles {
			objs = append(objs, c)
		}
		if err := write(rbacDir, "role.yaml", objs...); err != nil {
			return files, err
		}
	}
	return files, nil
}
