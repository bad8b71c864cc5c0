package containerd_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

// TestResolvConf: a container sees the resolv.conf the agent mounts at
// /etc/resolv.conf instead of the host's, and the host's without one.
func TestResolvConf(t *testing.T) {
	rt := startRuntime(t)
	if !rt.PrivateMounts() {
		t.Fatal("containerd containers keep their mounts private")
	}
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-e2e", "")
	dir := t.TempDir()
	podConf := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(podConf, []byte("search default.svc.cluster.local\nnameserver 127.96.0.10\noptions ndots:5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mounts []cri.Mount
		want   string
	}{
		{"pod", []cri.Mount{{HostPath: podConf, ContainerPath: "/etc/resolv.conf"}}, "search default.svc.cluster.local\nnameserver 127.96.0.10\noptions ndots:5"},
		{"host", nil, strings.TrimRight(string(host), "\n")},
	} {
		spec := cri.ContainerSpec{
			PodNamespace: "default", PodName: "dns-" + tc.name, Name: "c", Image: "converge-e2e", Mounts: tc.mounts,
			Args: []string{"/bin/testbin", "cat", "/etc/resolv.conf"}, LogPath: filepath.Join(dir, tc.name+".log"),
		}
		id, err := rt.Start(t.Context(), spec)
		if err != nil {
			t.Fatalf("%s: Start: %v", tc.name, err)
		}
		if st, err := rt.Wait(t.Context(), id); err != nil || st.ExitCode != 0 {
			t.Fatalf("%s: Wait: %+v %v", tc.name, st, err)
		}
		var got []string
		for _, l := range runtimetest.ReadLog(t, spec.LogPath) {
			got = append(got, l.Text)
		}
		if want := strings.Split(tc.want, "\n"); !slices.Equal(got, want) {
			t.Errorf("%s: /etc/resolv.conf in the container = %q, want %q", tc.name, got, want)
		}
		if err := rt.Remove(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}
