package containerd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri/containerd"
	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/image"
)

// startRuntime starts a private containerd in a short temp dir (unix socket
// paths are limited to 107 bytes) and a Runtime on it. Cleanup removes every
// container, closes the client, stops the daemon and deletes the dir, in that
// order. It fails the test when containerd is not installed.
func startRuntime(t *testing.T) *containerd.Runtime {
	t.Helper()
	dir, err := os.MkdirTemp("", "cvg-ctd-")
	if err != nil {
		t.Fatal(err)
	}
	// The daemon must outlive the cleanups that remove containers, so it gets
	// its own context rather than t.Context (cancelled before cleanups run).
	dctx, stop := context.WithCancel(context.Background())
	d, err := daemon.Start(dctx, daemon.Options{Dir: dir})
	if err != nil {
		stop()
		_ = os.RemoveAll(dir)
		t.Fatalf("start containerd: %v", err)
	}
	rt, err := containerd.New(t.Context(), containerd.Options{Address: d.Address()})
	if err != nil {
		stop()
		_ = d.Wait()
		_ = os.RemoveAll(dir)
		t.Fatalf("connect runtime: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.RemoveAll(ctx); err != nil {
			t.Errorf("remove containers: %v", err)
		}
		if err := rt.Close(); err != nil {
			t.Errorf("close runtime: %v", err)
		}
		stop()
		if err := d.Wait(); err != nil {
			t.Errorf("containerd: %v", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove containerd dir: %v", err)
		}
	})
	return rt
}

// goBuildStatic builds a main package with CGO_ENABLED=0 into dir.
func goBuildStatic(t *testing.T, pkg, dir string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is required: %v", err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(gobin, "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// importBinary packs a static binary into an image with image.Build and
// imports it through image.Import; it returns the imported names.
func importBinary(t *testing.T, rt *containerd.Runtime, binary, name, path string) []string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "image.tar")
	f, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := image.Build(t.Context(), image.BuildOptions{Binary: binary, Name: name, Path: path, Out: f}); err != nil {
		t.Fatalf("build image: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err = os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := image.Import(t.Context(), rt.Client(), f)
	if err != nil {
		t.Fatalf("import image: %v", err)
	}
	return names
}
