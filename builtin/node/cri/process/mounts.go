package process

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
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

// mountPoints counts, per host path, the containers that mount on it, and
// remembers which of those paths a container created. A mount point shared
// by several containers (every container's /dev/termination-log) must stay
// while one of them runs: unlinking a file another mount namespace mounts on
// detaches that mount (Linux 3.18 and later). The last user removes it.
type mountPoints struct {
	mu      sync.Mutex
	users   map[string]int
	created map[string]bool
}

// acquire counts a container using targets; call it before mounting.
func (m *mountPoints) acquire(targets []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.users == nil {
		m.users, m.created = map[string]int{}, map[string]bool{}
	}
	for _, t := range targets {
		m.users[t]++
	}
}

// release ends a container's use of targets; created are the paths it
// created. It removes, deepest first, what is no longer used by anyone and
// was created by some container (removeCreated's rules).
func (m *mountPoints) release(targets, created []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.users == nil {
		m.users, m.created = map[string]int{}, map[string]bool{}
	}
	for _, p := range created {
		m.created[p] = true
	}
	for _, t := range targets {
		if m.users[t]--; m.users[t] <= 0 {
			delete(m.users, t)
		}
	}
	candidates := append(slices.Clone(created), targets...)
	for _, t := range targets { // the directories made for a target, by whichever container
		for d := filepath.Dir(t); m.created[d]; d = filepath.Dir(d) {
			candidates = append(candidates, d)
		}
	}
	var gone []string
	for _, p := range candidates {
		if m.created[p] && m.users[p] == 0 && !slices.Contains(gone, p) {
			gone = append(gone, p)
		}
	}
	// Shallowest first: removeCreated walks from the end, children before
	// the directories they were made in.
	slices.SortFunc(gone, func(a, b string) int { return len(a) - len(b) })
	removeCreated(gone)
	for _, p := range gone {
		if _, err := os.Lstat(p); err != nil {
			delete(m.created, p)
		}
	}
}

// targets are the container paths of mounts.
func targets(mounts []cri.Mount) []string {
	out := make([]string, 0, len(mounts))
	for _, m := range mounts {
		out = append(out, m.ContainerPath)
	}
	return out
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
