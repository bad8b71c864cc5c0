package containerd_test

import (
	"path/filepath"
	"testing"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/runtimetest"
)

// TestHostname: a container's host name is the spec's Hostname (the pod's
// spec.hostname), else the pod's name.
func TestHostname(t *testing.T) {
	rt := startRuntime(t)
	bin := goBuildStatic(t, testPkg, t.TempDir())
	importBinary(t, rt, bin, "converge-e2e", "")
	dir := t.TempDir()
	for _, tc := range []struct{ name, hostname, want string }{
		{"pod-name", "", "pod-name"},
		{"dns-test-1234", "dns-querier-1", "dns-querier-1"},
	} {
		spec := cri.ContainerSpec{
			PodNamespace: "default", PodName: tc.name, Hostname: tc.hostname, Name: "c", Image: "converge-e2e",
			Args: []string{"/bin/testbin", "hostname"}, LogPath: filepath.Join(dir, tc.name+".log"),
		}
		id, err := rt.Start(t.Context(), spec)
		if err != nil {
			t.Fatalf("%s: Start: %v", tc.name, err)
		}
		if st, err := rt.Wait(t.Context(), id); err != nil || st.ExitCode != 0 {
			t.Fatalf("%s: Wait: %+v %v", tc.name, st, err)
		}
		if got := runtimetest.ReadLog(t, spec.LogPath); len(got) != 1 || got[0].Text != tc.want {
			t.Errorf("%s: hostname printed %+v, want %q", tc.name, got, tc.want)
		}
		if err := rt.Remove(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}
