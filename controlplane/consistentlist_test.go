package controlplane

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestConsistentListFromWatchCache: a LIST without resourceVersion (the
// latest state) is answered from the watch cache once etcd's watch progress
// shows the cache current — without a storage list — and still shows a
// write the API server did not make (another API server's, here written
// straight to the store).
func TestConsistentListFromWatchCache(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cp := startInsecure(t)
	do := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, cp.URL()+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return string(b)
	}
	storageLists := func() uint64 {
		t.Helper()
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(strings.NewReader(do(http.MethodGet, "/metrics", "")))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fams["etcd_request_duration_seconds"].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["operation"] == "list" && labels["type"] == "configmaps" {
				return m.GetHistogram().GetSampleCount()
			}
		}
		return 0
	}
	const cms = "/api/v1/namespaces/default/configmaps"
	do(http.MethodPost, cms, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
	do(http.MethodGet, cms+"?resourceVersion=0", "") // starts the watch cache
	key := "/registry/core/configmaps/default/"
	kv, err := cp.Storage().Get(context.Background(), key+"a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Storage().Create(context.Background(), key+"b", bytes.Replace(kv.Value, []byte(`"name":"a"`), []byte(`"name":"b"`), 1)); err != nil {
		t.Fatal(err)
	}
	// fromCache lists the ConfigMaps (which must show a and b) and reports
	// whether that read no storage. etcd answers a progress request once all
	// watches of the stream are in sync, so while the control plane's own
	// caches start up a list may fall back to storage: a few tries.
	fromCache := func() bool {
		t.Helper()
		for range 10 {
			before := storageLists()
			list := do(http.MethodGet, cms, "")
			if !strings.Contains(list, `"name":"a"`) || !strings.Contains(list, `"name":"b"`) {
				t.Fatalf("the consistent list misses a or b: %s", list)
			}
			if storageLists() == before {
				return true
			}
		}
		return false
	}
	if !fromCache() {
		t.Error("consistent lists read storage")
	}
	// Writes elsewhere move the store's revision past the cache's last event:
	// only the watch's progress notification tells that nothing changed here.
	for _, name := range []string{"s1", "s2", "s3"} {
		do(http.MethodPost, "/api/v1/namespaces/default/secrets", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"`+name+`"}}`)
	}
	if !fromCache() {
		t.Error("consistent lists after writes elsewhere read storage")
	}
}

// TestLargeListStreams: a list of more than 64 KiB is streamed (writeList)
// with an exact Content-Length and decodes to every item.
func TestLargeListStreams(t *testing.T) {
	t.Parallel()
	cp := startInsecure(t)
	const n = 150
	data := strings.Repeat("x", 1000)
	for i := range n {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%03d"},"data":{"k":%q}}`, i, data)
		resp, err := http.Post(cp.URL()+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create cm-%03d: %d", i, resp.StatusCode)
		}
	}
	for _, rv := range []string{"", "0"} {
		resp, err := http.Get(cp.URL() + "/api/v1/namespaces/default/configmaps?resourceVersion=" + rv)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.ContentLength != int64(len(b)) {
			t.Errorf("rv %q: Content-Length %d, body %d bytes", rv, resp.ContentLength, len(b))
		}
		var list struct {
			Kind  string `json:"kind"`
			Items []struct {
				Metadata struct{ Name string } `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatalf("rv %q: %v: %.200s", rv, err, b)
		}
		if list.Kind != "ConfigMapList" || len(list.Items) != n || list.Items[0].Metadata.Name != "cm-000" || list.Items[n-1].Metadata.Name != fmt.Sprintf("cm-%03d", n-1) {
			t.Errorf("rv %q: kind %s, %d items", rv, list.Kind, len(list.Items))
		}
	}
}

// startInsecure starts an insecure control plane without controllers,
// closed when the test ends.
func startInsecure(t *testing.T) *ControlPlane {
	t.Helper()
	cp, err := Start(t.Context(), Options{DataDir: t.TempDir(), NoFsync: true, CompactionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	return cp
}
