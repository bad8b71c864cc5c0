package controlplane_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/image"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/registrytest"
	"github.com/converge-dev/converge/testenv"
)

// TestNewNodeRegistriesFile: a containerd node refuses a registries config it
// cannot read, naming the file, before it starts anything.
func TestNewNodeRegistriesFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "registries.yaml")
	if err := os.WriteFile(bad, []byte("mirrors:\n  docker.io:\n    endpoints: [x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := controlplane.NewNode(t.Context(), controlplane.NodeOptions{
		Runtime: controlplane.RuntimeContainerd, RegistriesFile: bad,
	})
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "endpoints") {
		t.Errorf("NewNode with a bad registries file = %v, want an error naming %s and the unknown field", err, bad)
	}
}

// TestContainerdNodeRegistriesFile: a containerd node started by NewNode
// pulls a pod's image from a registry behind basic auth with the login its
// registries file gives (no pull secret), and runs it.
func TestContainerdNodeRegistriesFile(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{Username: "alice", Password: "s3cret"})
	env := testenv.StartT(t, testenv.Options{})
	root, err := os.MkdirTemp("", "cvg-cp-") // short: containerd's socket lives below it
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	regFile := filepath.Join(root, "registries.yaml")
	if err := os.WriteFile(regFile, []byte("configs:\n  \""+reg.Host+"\":\n    auth: {username: alice, password: s3cret}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n, err := controlplane.NewNode(ctx, controlplane.NodeOptions{
		Runtime: controlplane.RuntimeContainerd, RegistriesFile: regFile,
		Agent: node.Options{NodeName: "ctrd", Config: &client.Config{Host: env.URL}, RootDir: filepath.Join(root, "node"),
			PodCIDR: "127.79.0.0/16", PodNetwork: node.PodNetworkLoopback, Logger: logr.Discard()},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- n.Start(ctx) }()
	defer func() { cancel(); <-done }()

	// Put busybox in the registry through the node's own containerd.
	ref := reg.Host + "/private/busybox:v1"
	var buf bytes.Buffer
	if _, err := image.Build(t.Context(), image.BuildOptions{Binary: "/bin/busybox", Name: "busybox-src", Out: &buf}); err != nil {
		t.Fatalf("build busybox image (static /bin/busybox: apt-get install -y busybox-static): %v", err)
	}
	archive := filepath.Join(root, "busybox.tar")
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := daemon.Address(filepath.Join(root, "node", "containerd"))
	if _, err := image.ImportFile(t.Context(), image.ImportFileOptions{Address: addr, Path: archive}); err != nil {
		t.Fatal(err)
	}
	store, err := controlplane.OpenImageStore(t.Context(), controlplane.ImageStoreOptions{Address: addr, RegistriesFile: regFile})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Push(t.Context(), "busybox-src", ref, nil); err != nil {
		t.Fatalf("push with the registries file's login: %v", err)
	}
	for _, r := range []string{"busybox-src", ref} {
		if err := store.RemoveImage(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}

	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: "ctrd", TerminationGracePeriodSeconds: api.Ptr(int64(1)), Containers: []corev1.Container{
		{Name: "main", Image: ref, Command: []string{"/bin/busybox", "sleep", "3600"}}}}}
	pod.Namespace, pod.Name = "default", "pulled"
	if err := c.Create(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "pulled"}, pod); err != nil {
			t.Fatal(err)
		}
		if cs := pod.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Running != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod not running after 30s: %+v", pod.Status.ContainerStatuses)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The agent removes the container before it completes the deletion, so
	// nothing outlives the daemon.
	if err := c.Delete(t.Context(), pod); err != nil {
		t.Fatal(err)
	}
	for c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "pulled"}, pod) == nil {
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatal("pod not deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
