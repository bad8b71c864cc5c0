package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/testenv"
)

func TestApply(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "managed fields and server-side apply")
}

var (
	env *testenv.Environment
	hc  = &http.Client{Timeout: 30 * time.Second}
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(context.Background(), testenv.Options{Logger: GinkgoLogr})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(env.Stop()).To(Succeed()) })
})

// response is one API response.
type response struct {
	code int
	obj  map[string]any
	raw  string
}

// call sends body (a string, []byte or a value encoded as JSON) with the
// content type and user agent given, and decodes a JSON object answer.
func call(ctx context.Context, method, path, contentType string, body any, userAgent string) response {
	GinkgoHelper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, env.URL+path, rd)
	Expect(err).NotTo(HaveOccurred())
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if userAgent != "" {
		req.Header.Set("User-Agent", userAgent)
	}
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	out := response{code: resp.StatusCode, raw: string(data)}
	if len(data) > 0 && data[0] == '{' {
		out.obj, err = api.DecodeMap(data)
		Expect(err).NotTo(HaveOccurred())
	}
	return out
}

const (
	jsonType  = "application/json"
	applyType = "application/apply-patch+yaml"
	mergeType = "application/merge-patch+json"
	jsonPatch = "application/json-patch+json"
	smpType   = "application/strategic-merge-patch+json"
	yamlType  = "application/yaml"
)

// newNamespace creates a namespace for one spec and returns its name.
func newNamespace(ctx context.Context) string {
	GinkgoHelper()
	name := fmt.Sprintf("ssa-%d", GinkgoRandomSeed()%1000+int64(GinkgoParallelProcess())*1000+nextID())
	r := call(ctx, http.MethodPost, "/api/v1/namespaces", jsonType, map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}, "")
	Expect(r.code).To(Equal(http.StatusCreated), r.raw)
	return name
}

var ids int64

func nextID() int64 { ids++; return ids }

// entries returns an object's managedFields with each entry's time removed
// (after checking it is an RFC 3339 time), as JSON for exact comparison.
func entries(obj map[string]any) string {
	GinkgoHelper()
	mf := api.NestedSlice(obj, "metadata", "managedFields")
	out := make([]any, 0, len(mf))
	for _, e := range mf {
		m := api.DeepCopyJSON(e.(map[string]any))
		// An apply that changes nothing records no time, as in Kubernetes.
		if ts, ok := m["time"].(string); ok {
			_, err := time.Parse(time.RFC3339, ts)
			Expect(err).NotTo(HaveOccurred(), "entry time %q", ts)
			delete(m, "time")
		}
		out = append(out, m)
	}
	b, err := json.Marshal(out)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// i64 is the integer at path in obj (0 when missing).
func i64(obj map[string]any, path ...string) int64 {
	n, _ := api.NestedInt64(obj, path...)
	return n
}

// fieldsOf is the FieldsV1 of manager's first entry in obj, as JSON ("" when
// it has none).
func fieldsOf(obj map[string]any, manager string) string {
	GinkgoHelper()
	for _, e := range api.NestedSlice(obj, "metadata", "managedFields") {
		if m, _ := e.(map[string]any); m["manager"] == manager {
			b, err := json.Marshal(m["fieldsV1"])
			Expect(err).NotTo(HaveOccurred())
			return string(b)
		}
	}
	return ""
}
