package containerd_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/containerd"
	"github.com/converge-dev/converge/internal/registrytest"
)

// pushTestImage builds the test binary's image, imports it and pushes it to
// ref; then removes it locally so that only a pull brings it back.
func pushTestImage(t *testing.T, rt *containerd.Runtime, ref string, creds []cri.Credential) {
	t.Helper()
	bin := goBuildStatic(t, testPkg, t.TempDir())
	names := importBinary(t, rt, bin, "converge-pull-src", "")
	if _, err := rt.Push(t.Context(), names[0], ref, creds); err != nil {
		t.Fatalf("Push %s: %v", ref, err)
	}
	for _, n := range []string{names[0], ref} {
		if err := rt.RemoveImage(t.Context(), n); err != nil {
			t.Fatalf("RemoveImage %s: %v", n, err)
		}
	}
	if _, ok, err := rt.ImageStatus(t.Context(), ref); ok || err != nil {
		t.Fatalf("ImageStatus after remove = %v, %v", ok, err)
	}
}

// countingProxy fronts a registry on another loopback port and counts
// manifest requests by tag (one per resolve).
func countingProxy(t *testing.T, host string) (string, *atomic.Int64) {
	var n atomic.Int64
	p := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/manifests/v1") {
			n.Add(1)
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), &n
}

// TestPull: an image pushed to a real registry on loopback (plain HTTP, no
// configuration) is pulled, listed, run and removed; eight concurrent pulls
// of one reference resolve it once; missing images and unreachable registries
// fail with the registry's words.
func TestPull(t *testing.T) {
	rt := startRuntime(t)
	reg := registrytest.Start(t, registrytest.Options{})
	host, resolves := countingProxy(t, reg.Host)
	ref := host + "/demo/testbin:v1"
	pushTestImage(t, rt, ref, nil)

	resolves.Store(0)
	var wg sync.WaitGroup
	results := make([]cri.PullResult, 8)
	errs := make([]error, 8)
	for i := range results {
		wg.Add(1)
		go func() { defer wg.Done(); results[i], errs[i] = rt.PullImage(t.Context(), ref, nil) }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("pull %d: %v", i, err)
		}
		if results[i].Image.ID != results[0].Image.ID || !strings.HasPrefix(results[i].Image.ID, "sha256:") || results[i].Image.Size <= 0 {
			t.Errorf("pull %d = %+v, want the same image as pull 0 (%+v)", i, results[i], results[0])
		}
	}
	if n := resolves.Load(); n != 1 {
		t.Errorf("8 concurrent pulls resolved the tag %d times, want 1 (one shared pull)", n)
	}
	img, ok, err := rt.ImageStatus(t.Context(), ref)
	if err != nil || !ok || img.ID != results[0].Image.ID || img.Names[0] != ref {
		t.Errorf("ImageStatus = %+v %v %v", img, ok, err)
	}
	list, err := rt.ListImages(t.Context())
	if err != nil || len(list) != 1 || list[0].ID != img.ID {
		t.Errorf("ListImages = %+v, %v; want only %s", list, err, img.ID)
	}

	// The pulled image runs.
	spec := cri.ContainerSpec{PodNamespace: "default", PodName: "p", Name: "c", Image: ref,
		Args: []string{"/bin/testbin", "echo", "pulled"}, LogPath: filepath.Join(t.TempDir(), "0.log")}
	id, err := rt.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start pulled image: %v", err)
	}
	if st, err := rt.Wait(t.Context(), id); err != nil || st.ExitCode != 0 {
		t.Errorf("pulled image's container: %+v %v", st, err)
	}
	_ = rt.Remove(t.Context(), id)

	// Removing by ID removes every name.
	if err := rt.RemoveImage(t.Context(), img.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := rt.ListImages(t.Context()); err != nil || len(list) != 0 {
		t.Errorf("ListImages after RemoveImage(ID) = %+v, %v", list, err)
	}
	if u, err := rt.ImageFsUsage(t.Context()); err != nil || u.CapacityBytes == 0 || u.UsedBytes == 0 || !strings.HasPrefix(u.Path, "/") {
		t.Errorf("ImageFsUsage = %+v, %v", u, err)
	}

	for _, c := range []struct{ ref, words string }{
		{reg.Host + "/demo/missing:v1", "not found"},
		{"127.0.0.1:1/demo/testbin:v1", "connection refused"},
	} {
		_, err := rt.PullImage(t.Context(), c.ref, nil)
		if err == nil || !strings.Contains(err.Error(), c.words) {
			t.Errorf("PullImage(%s) = %v, want an error saying %q", c.ref, err, c.words)
		}
		t.Logf("PullImage(%s): %v", c.ref, err)
	}

	// A cancelled caller gets its context's error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := rt.PullImage(ctx, ref, nil); err == nil {
		t.Error("PullImage with a cancelled context succeeded")
	}
	// ... and a pull abandoned by all its callers does not poison the next one.
	if _, err := rt.PullImage(t.Context(), ref, nil); err != nil {
		t.Errorf("PullImage after an abandoned pull: %v", err)
	}
}

// TestPullAuth: a registry behind htpasswd basic auth, or behind token
// authentication (Bearer challenges, tokens from a token server for the
// login), gives the image only with the right credentials, from the pull or
// from the registries config; otherwise the error carries the registry's 401
// words.
func TestPullAuth(t *testing.T) {
	rt := startRuntime(t)
	for _, token := range []bool{false, true} {
		t.Run(map[bool]string{false: "basic", true: "token"}[token], func(t *testing.T) { testPullAuth(t, rt, token) })
	}
}

func testPullAuth(t *testing.T, rt *containerd.Runtime, token bool) {
	reg := registrytest.Start(t, registrytest.Options{Username: "alice", Password: "s3cret", Token: token})
	ref := reg.Host + "/private/testbin:v1"
	good := []cri.Credential{{Host: reg.Host, Username: "alice", Password: "s3cret"}}
	pushTestImage(t, rt, ref, good)

	for _, c := range []struct {
		name  string
		creds []cri.Credential
	}{
		{"no credentials", nil},
		{"wrong password", []cri.Credential{{Host: reg.Host, Username: "alice", Password: "wrong"}}},
		{"credentials for another registry", []cri.Credential{{Host: "example.com", Username: "alice", Password: "s3cret"}}},
	} {
		// Without credentials containerd does not answer a Basic challenge
		// ("authorization failed: no basic auth credentials") and an anonymous
		// token grants nothing ("insufficient_scope: authorization failed"),
		// in the words Kubernetes on containerd shows.
		_, err := rt.PullImage(t.Context(), ref, c.creds)
		if err == nil || (!strings.Contains(err.Error(), "401 Unauthorized") && !strings.Contains(err.Error(), "authorization failed")) {
			t.Errorf("pull with %s = %v, want the registry's 401 Unauthorized", c.name, err)
		}
		t.Logf("pull with %s: %v", c.name, err)
	}
	if _, err := rt.PullImage(t.Context(), ref, good); err != nil {
		t.Fatalf("pull with the right credentials: %v", err)
	}
	if err := rt.RemoveImage(t.Context(), ref); err != nil {
		t.Fatal(err)
	}

	// The same login from a registries.yaml file.
	file := filepath.Join(t.TempDir(), "registries.yaml")
	yaml := "configs:\n  \"" + reg.Host + "\":\n    auth:\n      auth: YWxpY2U6czNjcmV0\n" // alice:s3cret
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	regs, err := containerd.LoadRegistries(file)
	if err != nil {
		t.Fatal(err)
	}
	rt2, err := containerd.New(t.Context(), containerd.Options{Address: rt.Address(), Registries: regs})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if _, err := rt2.PullImage(t.Context(), ref, nil); err != nil {
		t.Errorf("pull with the registries config's login: %v", err)
	}
}

// TestPullMirror: a docker.io image comes from the mirror the registries
// config names (a loopback registry, over plain HTTP) and keeps its docker.io name.
func TestPullMirror(t *testing.T) {
	rt := startRuntime(t)
	reg := registrytest.Start(t, registrytest.Options{})
	pushTestImage(t, rt, reg.Host+"/demo/testbin:v1", nil)
	regs := containerd.Registries{Mirrors: map[string]containerd.Mirror{"docker.io": {Endpoints: []string{"http://" + reg.Host}}}}
	rt2, err := containerd.New(t.Context(), containerd.Options{Address: rt.Address(), Registries: regs})
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	res, err := rt2.PullImage(t.Context(), "demo/testbin:v1", nil)
	if err != nil {
		t.Fatalf("pull through the mirror: %v", err)
	}
	if want := "docker.io/demo/testbin:v1"; res.Image.Names[0] != want {
		t.Errorf("pulled %q, want %q", res.Image.Names[0], want)
	}
	if _, ok, err := rt.ImageStatus(t.Context(), "demo/testbin:v1"); !ok || err != nil {
		t.Errorf("ImageStatus(demo/testbin:v1) = %v, %v", ok, err)
	}
}
