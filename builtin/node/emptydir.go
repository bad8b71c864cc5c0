package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// setupEmptyDir makes an emptyDir volume at dir as the kubelet does: a
// directory of mode 0777 and, for medium Memory, a tmpfs mounted on it (sized
// by sizeLimit when set, else tmpfs' default). An agent that may not mount
// (not root) keeps a plain directory for medium Memory.
func setupEmptyDir(dir string, src *corev1.EmptyDirVolumeSource) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	if src.Medium == corev1.StorageMediumMemory {
		mounted, err := isMountPoint(dir)
		if err != nil {
			return err
		}
		if !mounted {
			opts := ""
			if src.SizeLimit != nil {
				if n, err := src.SizeLimit.Value(); err == nil && n > 0 {
					opts = fmt.Sprintf("size=%d", n)
				}
			}
			if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil && !errors.Is(err, syscall.EPERM) {
				return fmt.Errorf("mount tmpfs for medium Memory: %w", err)
			}
		}
	}
	return os.Chmod(dir, 0o777)
}

// isMountPoint reports whether dir is on another device than its parent.
func isMountPoint(dir string) (bool, error) {
	var st, parent syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return false, fmt.Errorf("stat %s: %w", dir, err)
	}
	if err := syscall.Lstat(filepath.Dir(dir), &parent); err != nil {
		return false, fmt.Errorf("stat %s: %w", filepath.Dir(dir), err)
	}
	return st.Dev != parent.Dev, nil
}

// unmountVolumes unmounts what is mounted on the volume directories under
// volumesDir (medium Memory emptyDirs), so removing them does not leave a
// mount behind.
func unmountVolumes(volumesDir string) {
	entries, err := os.ReadDir(volumesDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(volumesDir, e.Name())
		if ok, err := isMountPoint(dir); err == nil && ok && e.IsDir() {
			_ = syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	}
}
