package process

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// ensureTarget creates a missing mount point (a directory, or an empty file
// when the source is a file) and its missing parents, returning what it
// created, deepest last.
func ensureTarget(target string, file bool) ([]string, error) {
	if _, err := os.Lstat(target); err == nil {
		return nil, nil
	}
	var created []string
	var missing []string
	for d := filepath.Dir(target); d != "/" && d != "."; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	slices.Reverse(missing)
	for _, d := range missing {
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return created, fmt.Errorf("create mount point parent %s: %w", d, err)
		}
		created = append(created, d)
	}
	// Another container may create the same mount point (such as
	// /dev/termination-log) at the same time: it then owns it.
	if file {
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if os.IsExist(err) {
			return created, nil
		}
		if err != nil {
			return created, fmt.Errorf("create mount point %s: %w", target, err)
		}
		f.Close()
	} else if err := os.Mkdir(target, 0o755); os.IsExist(err) {
		return created, nil
	} else if err != nil {
		return created, fmt.Errorf("create mount point %s: %w", target, err)
	}
	return append(created, target), nil
}

// bindMounts bind-mounts each mount in the calling thread's (private) mount
// namespace.
func bindMounts(mounts []cri.Mount) ([]string, error) {
	var created []string
	for _, m := range mounts {
		fi, err := os.Stat(m.HostPath)
		if err != nil {
			return created, fmt.Errorf("%w: mount source: %w", cri.ErrInvalidSpec, err)
		}
		// A mount point shared with another container may go when that
		// one is removed, between ensureTarget and the mount: once more.
		for try := 0; ; try++ {
			c, err := ensureTarget(m.ContainerPath, !fi.IsDir())
			created = append(created, c...)
			if err != nil {
				return created, err
			}
			err = syscall.Mount(m.HostPath, m.ContainerPath, "", syscall.MS_BIND|syscall.MS_REC, "")
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.ENOENT) || try > 0 {
				return created, fmt.Errorf("bind-mount %s at %s: %w", m.HostPath, m.ContainerPath, err)
			}
		}
		if m.ReadOnly {
			if err := syscall.Mount("", m.ContainerPath, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_REC, ""); err != nil {
				return created, fmt.Errorf("make %s read-only: %w", m.ContainerPath, err)
			}
		}
	}
	return created, nil
}

// symlinkMounts links each ContainerPath to its HostPath (no mount namespace).
func symlinkMounts(mounts []cri.Mount) ([]string, error) {
	var created []string
	for _, m := range mounts {
		if fi, err := os.Lstat(m.ContainerPath); err == nil {
			if fi.Mode()&os.ModeSymlink == 0 {
				return created, fmt.Errorf("%w: mount path %s exists on the host (without mount namespaces mounts are symlinks)", cri.ErrInvalidSpec, m.ContainerPath)
			}
			if err := os.Remove(m.ContainerPath); err != nil {
				return created, fmt.Errorf("replace symlink %s: %w", m.ContainerPath, err)
			}
		}
		if err := os.MkdirAll(filepath.Dir(m.ContainerPath), 0o755); err != nil {
			return created, fmt.Errorf("create mount parent: %w", err)
		}
		if err := os.Symlink(m.HostPath, m.ContainerPath); err != nil {
			return created, fmt.Errorf("link %s to %s: %w", m.ContainerPath, m.HostPath, err)
		}
		created = append(created, m.ContainerPath)
	}
	return created, nil
}

// removeCreated removes created mount points (deepest first) when they are
// empty or symlinks; it leaves anything holding data.
func removeCreated(paths []string) {
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&os.ModeSymlink != 0 || fi.Size() == 0 || fi.IsDir() {
			_ = syscall.Rmdir(p)
			if !fi.IsDir() {
				_ = os.Remove(p)
			}
		}
	}
}
