package process

import (
	"os"
	"path/filepath"
	"testing"
)

// A mount point two containers use stays until the last one is done with
// it, whichever created it.
func TestMountPointsShared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "made", "termination-log")
	created, err := ensureTarget(target, true)
	if err != nil || len(created) != 2 {
		t.Fatalf("ensureTarget: %v, %v", created, err)
	}
	var m mountPoints
	m.acquire([]string{target}) // the creator
	m.acquire([]string{target}) // another container, the path already there
	if again, err := ensureTarget(target, true); err != nil || len(again) != 0 {
		t.Fatalf("ensureTarget of an existing path: %v, %v", again, err)
	}
	m.release([]string{target}, created)
	if _, err := os.Lstat(target); err != nil {
		t.Fatalf("the mount point went while another container uses it: %v", err)
	}
	m.release([]string{target}, nil)
	for _, p := range created {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there after the last user: %v", p, err)
		}
	}
}
