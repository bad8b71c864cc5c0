package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/converge-dev/converge/internal/shared"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
)

var corpus = shared.Path("conformance")

// client talks to the environment's API over HTTP.
type client struct {
	base string
	hc   *http.Client
}

type response struct {
	code int
	obj  map[string]any
	raw  string
	hdr  http.Header
}

func (r response) message() string {
	m, _ := r.obj["message"].(string)
	return m
}

func (c *client) do(ctx context.Context, method, path string, body any, hdr map[string]string) (response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return response{}, fmt.Errorf("encode body: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return response{}, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return response{}, fmt.Errorf("read body: %w", err)
	}
	out := response{code: resp.StatusCode, raw: string(data), hdr: resp.Header}
	if len(data) > 0 && data[0] == '{' {
		out.obj, _ = api.DecodeMap(data)
	}
	return out, nil
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// readDocs reads every YAML document of file as a JSON object map.
func readDocs(file string) ([]map[string]any, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var out []map[string]any
	for _, doc := range docSep.Split(string(data), -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("convert %s: %w", file, err)
		}
		m, err := api.DecodeMap(j)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", file, err)
		}
		out = append(out, m)
	}
	return out, nil
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func readDoc(rel string) map[string]any {
	docs, err := readDocs(filepath.Join(corpus, rel))
	if err != nil {
		panic(err)
	}
	return docs[0]
}

// crdInfo is what the tests need to address the CRs of one CRD.
type crdInfo struct {
	group, plural, kind string
	namespaced          bool
}

// resourcePath returns the collection path of obj (a CR), given the CRDs.
func resourcePath(crds map[string]crdInfo, obj map[string]any) string {
	av, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, _ := api.ParseGroupVersion(av)
	info, ok := crds[gv.Group+"/"+kind]
	if !ok {
		panic("no CRD for " + av + " " + kind)
	}
	p := "/apis/" + gv.Group + "/" + gv.Version
	if info.namespaced {
		ns := api.NestedString(obj, "metadata", "namespace")
		if ns == "" {
			ns = "default"
		}
		p += "/namespaces/" + ns
	}
	return p + "/" + info.plural
}

func conditionStatus(obj map[string]any, typ string) string {
	for _, c := range api.NestedSlice(obj, "status", "conditions") {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}
