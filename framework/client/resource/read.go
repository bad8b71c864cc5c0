package resource

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
)

// Stdin is the path that means standard input.
const Stdin = "-"

// ErrNoObjects is returned by Read when the inputs hold no object at all.
var ErrNoObjects = errors.New("resource: no objects found")

// Object is one manifest document and where it came from.
type Object struct {
	// Source names the origin, "FILE" or "FILE#N" for the N-th document (from 1)
	// of a multi-document file; "-" stands for standard input.
	Source string
	// Object is the decoded document.
	Object *api.Unstructured
}

// Options say where to read manifests from.
type Options struct {
	// Paths are files, directories or Stdin.
	Paths []string
	// Recursive descends into subdirectories of directories.
	Recursive bool
	// Stdin is read for the path "-" (os.Stdin when nil).
	Stdin io.Reader
}

// Read reads every manifest of opts.Paths. It returns ErrNoObjects (wrapped, with
// a hint) when there is nothing to read.
func Read(opts Options) ([]Object, error) {
	if len(opts.Paths) == 0 {
		return nil, errors.New("resource: no path given")
	}
	var out []Object
	var skippedDirs []string
	for _, p := range opts.Paths {
		if p == Stdin {
			in := opts.Stdin
			if in == nil {
				in = os.Stdin
			}
			data, err := io.ReadAll(in)
			if err != nil {
				return nil, fmt.Errorf("read standard input: %w", err)
			}
			objs, err := Decode(Stdin, data)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if !fi.IsDir() {
			objs, err := readFile(p)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != p && !opts.Recursive {
					skippedDirs = append(skippedDirs, path)
					return fs.SkipDir
				}
				return nil
			}
			if !IsManifestFile(path) {
				return nil
			}
			objs, err := readFile(path)
			if err != nil {
				return err
			}
			out = append(out, objs...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		if len(skippedDirs) > 0 {
			return nil, fmt.Errorf("%w in %s; its subdirectories (%s) were not read: add -R to read them",
				ErrNoObjects, strings.Join(opts.Paths, ", "), strings.Join(skippedDirs, ", "))
		}
		return nil, fmt.Errorf("%w in %s", ErrNoObjects, strings.Join(opts.Paths, ", "))
	}
	return out, nil
}

// IsManifestFile reports whether a file found in a directory is read as a
// manifest (.yaml, .yml, .json).
func IsManifestFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func readFile(path string) ([]Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return Decode(path, data)
}

// Decode splits data (YAML or JSON, see the package doc) into objects named
// after source.
func Decode(source string, data []byte) ([]Object, error) {
	docs, err := Split(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	var out []Object
	for i, doc := range docs {
		name := source
		if len(docs) > 1 {
			name = fmt.Sprintf("%s#%d", source, i+1)
		}
		objs, err := decodeDoc(name, doc)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// Split returns the documents of data as JSON, empty documents removed. JSON
// input (a value, a stream of values, or an array of objects) is detected by
// its first character; anything else, or JSON that does not parse, is read as
// YAML documents separated by lines starting with "---".
func Split(data []byte) ([][]byte, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		if docs, err := splitJSON(trimmed); err == nil {
			return docs, nil
		}
	}
	var out [][]byte
	for i, doc := range splitYAML(data) {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("YAML document %d: %w", i+1, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue
		}
		out = append(out, j)
	}
	return out, nil
}

func splitJSON(data []byte) ([][]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out [][]byte
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		t := bytes.TrimSpace(raw)
		if len(t) > 0 && t[0] == '[' {
			var items []json.RawMessage
			if err := json.Unmarshal(t, &items); err != nil {
				return nil, err
			}
			out = append(out, toBytes(items)...)
			continue
		}
		if string(t) != "null" {
			out = append(out, t)
		}
	}
}

func toBytes(items []json.RawMessage) [][]byte {
	out := make([][]byte, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	return out
}

// splitYAML cuts data at document separators: lines that are "---" or start
// with "--- " (a comment or flow content may follow). Content after "--- " stays
// in the following document. "..." document-end markers are dropped.
func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimRight(line, " \t\r")
		switch {
		case trimmed == "---" || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "---\t"):
			docs = append(docs, slices.Clone(cur.Bytes()))
			cur.Reset()
			if rest := strings.TrimSpace(line[3:]); rest != "" && !strings.HasPrefix(rest, "#") {
				cur.WriteString(rest + "\n")
			}
			continue
		case trimmed == "...":
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	docs = append(docs, slices.Clone(cur.Bytes()))
	out := docs[:0]
	for _, d := range docs {
		if len(bytes.TrimSpace(d)) > 0 {
			out = append(out, d)
		}
	}
	return out
}

func decodeDoc(source string, doc []byte) ([]Object, error) {
	m, err := api.DecodeMap(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: not an object: %w", source, err)
	}
	u := &api.Unstructured{Object: m}
	if u.GroupVersionKind().Kind == "List" {
		items := api.NestedSlice(m, "items")
		var out []Object
		for i, it := range items {
			im, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: item %d of the List is not an object", source, i)
			}
			b, err := json.Marshal(im)
			if err != nil {
				return nil, fmt.Errorf("%s: item %d: %w", source, i, err)
			}
			objs, err := decodeDoc(fmt.Sprintf("%s[%d]", source, i), b)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
		return out, nil
	}
	if err := checkKind(m); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return []Object{{Source: source, Object: u}}, nil
}

func checkKind(m map[string]any) error {
	var missing []string
	if s, _ := m["apiVersion"].(string); s == "" {
		missing = append(missing, "apiVersion")
	}
	if s, _ := m["kind"].(string); s == "" {
		missing = append(missing, "kind")
	}
	if len(missing) > 0 {
		return fmt.Errorf("the object has no %s: every manifest needs apiVersion and kind", strings.Join(missing, " and "))
	}
	return nil
}
