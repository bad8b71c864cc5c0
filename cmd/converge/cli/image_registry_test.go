package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/internal/registrytest"
)

// TestImagePushPullListRemove: build --import, push to a real registry
// (open, then behind basic auth with --username/--password), rm, pull, ls.
func TestImagePushPullListRemove(t *testing.T) {
	dir, err := os.MkdirTemp("", "cvg-cli-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dctx, stop := context.WithCancel(context.Background())
	d, err := daemon.Start(dctx, daemon.Options{Dir: dir})
	if err != nil {
		stop()
		t.Fatalf("start containerd: %v", err)
	}
	defer func() { stop(); _ = d.Wait() }()
	open := registrytest.Start(t, registrytest.Options{})
	auth := registrytest.Start(t, registrytest.Options{Username: "alice", Password: "s3cret"})

	bin := buildHello(t, dir)
	run := func(wantCode int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append(args, "--address", d.Address())
		if code := Execute(t.Context(), args, &out, &errOut); code != wantCode {
			t.Fatalf("converge %s: exit %d, want %d: %s%s", strings.Join(args, " "), code, wantCode, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
	run(0, "image", "build", "--binary", bin, "--name", "hello", "--import")
	ref := open.Host + "/demo/hello:v1"
	if out := run(0, "image", "push", "hello", ref); !strings.Contains(out, "Pushed "+ref+" sha256:") {
		t.Errorf("push output %q", out)
	}
	if out := run(0, "image", "rm", "hello", ref); !strings.Contains(out, "Removed "+ref) {
		t.Errorf("rm output %q", out)
	}
	if out := run(1, "image", "rm", ref); !strings.Contains(out, "not found") {
		t.Errorf("rm of a removed image: %q", out)
	}
	if out := run(0, "image", "pull", ref); !strings.Contains(out, "Pulled "+ref+" sha256:") {
		t.Errorf("pull output %q", out)
	}
	if out := run(0, "image", "ls"); !strings.Contains(out, "IMAGE") || !strings.Contains(out, ref) {
		t.Errorf("ls output %q", out)
	}

	private := auth.Host + "/private/hello:v1"
	if out := run(1, "image", "push", ref, private); !strings.Contains(out, "401 Unauthorized") && !strings.Contains(out, "no basic auth credentials") {
		t.Errorf("push without login: %q", out)
	}
	run(0, "image", "push", ref, private, "--username", "alice", "--password", "s3cret")
	run(0, "image", "rm", private)
	if out := run(1, "image", "pull", private); !strings.Contains(out, "no basic auth credentials") {
		t.Errorf("pull without login: %q", out)
	}
	cfg := filepath.Join(dir, "registries.yaml")
	if err := os.WriteFile(cfg, []byte("configs:\n  \""+auth.Host+"\":\n    auth: {username: alice, password: s3cret}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(0, "image", "pull", private, "--registries", cfg)
}
