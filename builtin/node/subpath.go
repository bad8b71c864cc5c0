package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// subPathSource resolves a volume mount's subPath (subPathExpr already
// expanded) under root, the volume's host directory, as the kubelet does: an
// absolute subPath or one with a ".." element is a configuration error; a
// missing subPath is created as directories with the mode of the volume's root
// (the last one chmod-ed to it, so the umask does not narrow what the pod
// sees); the result, with symlinks resolved, must stay inside the volume. It
// returns the host path to bind-mount.
func subPathSource(root, sub string) (string, error) {
	if filepath.IsAbs(sub) {
		return "", configError{fmt.Sprintf("error SubPath `%s` must not be an absolute path", sub)}
	}
	if slices.Contains(strings.Split(sub, "/"), "..") {
		return "", configError{fmt.Sprintf("unable to provision SubPath `%s`: must not contain '..'", sub)}
	}
	base, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve volume path: %w", err)
	}
	fi, err := os.Stat(base)
	if err != nil {
		return "", fmt.Errorf("stat volume path: %w", err)
	}
	perm := fi.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSetuid | fs.ModeSticky)
	cur, created := base, ""
	for _, name := range strings.Split(sub, "/") {
		if name == "" || name == "." {
			continue
		}
		next := filepath.Join(cur, name)
		st, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(next, perm); err != nil {
				return "", fmt.Errorf("create subPath directory %s: %w", sub, err)
			}
			created = next
		case err != nil:
			return "", fmt.Errorf("subPath %s: %w", sub, err)
		case st.Mode()&fs.ModeSymlink != 0:
			if next, err = filepath.EvalSymlinks(next); err != nil {
				return "", fmt.Errorf("subPath %s: %w", sub, err)
			}
			if !within(base, next) {
				return "", configError{fmt.Sprintf("subPath `%s` resolves outside of its volume", sub)}
			}
		}
		cur = next
	}
	if created != "" {
		if err := os.Chmod(created, perm); err != nil {
			return "", fmt.Errorf("set subPath directory mode: %w", err)
		}
	}
	if !within(base, cur) {
		return "", configError{fmt.Sprintf("subPath `%s` resolves outside of its volume", sub)}
	}
	return cur, nil
}

// within reports whether p is base or below it (both clean and absolute).
func within(base, p string) bool {
	return p == base || strings.HasPrefix(p, base+string(filepath.Separator))
}
