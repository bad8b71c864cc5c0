package controlplane_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/converge-dev/converge/controlplane"
)

// TestDefaultStorageClass: a new cluster has the default StorageClass
// local-path (as k3s), a claim created without a class gets the default one
// at admission (Kubernetes' DefaultStorageClass plugin, the newest default
// when several are), a claim naming a class or "" keeps it, and a restart
// does not bring back a default class the user deleted while another class
// exists.
func TestDefaultStorageClass(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	opts := controlplane.Options{DataDir: dir, NoFsync: true, CompactionInterval: -1}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequestWithContext(ctx, method, cp.URL()+path, rd)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	code, sc := do(http.MethodGet, "/apis/storage.k8s.io/v1/storageclasses/local-path", nil)
	if code != http.StatusOK {
		t.Fatalf("get storageclass local-path: %d %v", code, sc)
	}
	meta := sc["metadata"].(map[string]any)
	if ann, _ := meta["annotations"].(map[string]any); ann["storageclass.kubernetes.io/is-default-class"] != "true" ||
		sc["provisioner"] != "converge.dev/local-path" || sc["volumeBindingMode"] != "WaitForFirstConsumer" || sc["reclaimPolicy"] != "Delete" {
		t.Fatalf("storageclass local-path: %v", sc)
	}

	claim := func(name string, class any) map[string]any {
		spec := map[string]any{"accessModes": []string{"ReadWriteOnce"}, "resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}
		if class != nil {
			spec["storageClassName"] = class
		}
		return map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": name}, "spec": spec}
	}
	classOf := func(name string, class any) any {
		t.Helper()
		code, got := do(http.MethodPost, "/api/v1/namespaces/default/persistentvolumeclaims", claim(name, class))
		if code != http.StatusCreated {
			t.Fatalf("create claim %s: %d %v", name, code, got)
		}
		return got["spec"].(map[string]any)["storageClassName"]
	}
	// The admission plugin reads the watch cache, which follows the writes
	// a moment later: a claim created right after a class may miss it.
	defaulted := func(prefix, want string) {
		t.Helper()
		for i := 0; ; i++ {
			got := classOf(fmt.Sprintf("%s-%d", prefix, i), nil)
			if got == want {
				return
			}
			if i == 50 {
				t.Fatalf("claim without a class: storageClassName %v, want the default %s", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	defaulted("no-class", "local-path")
	if got := classOf("empty-class", ""); got != "" {
		t.Errorf(`claim of class "": storageClassName %v, want ""`, got)
	}
	if got := classOf("named-class", "fast"); got != "fast" {
		t.Errorf("claim of class fast: storageClassName %v", got)
	}
	newer := map[string]any{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "example.com/fast",
		"metadata": map[string]any{"name": "fast", "annotations": map[string]any{"storageclass.kubernetes.io/is-default-class": "true"}}}
	if code, got := do(http.MethodPost, "/apis/storage.k8s.io/v1/storageclasses", newer); code != http.StatusCreated {
		t.Fatalf("create storageclass fast: %d %v", code, got)
	}
	defaulted("second-default", "fast")

	if code, got := do(http.MethodDelete, "/apis/storage.k8s.io/v1/storageclasses/local-path", nil); code != http.StatusOK {
		t.Fatalf("delete storageclass local-path: %d %v", code, got)
	}
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	cp, err = controlplane.Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cp.Close() })
	if code, _ := do(http.MethodGet, "/apis/storage.k8s.io/v1/storageclasses/local-path", nil); code != http.StatusNotFound {
		t.Errorf("after a restart, the deleted local-path class: %d, want 404 (another class exists)", code)
	}
}
