package node

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dataLink is the symlink in a projected volume's directory that names the
// current generation of its files (the kubelet's "..data").
const dataLink = "..data"

// writeFiles publishes files (path → data, with modes) in dir so that a
// container that bind-mounted dir sees each update at once and whole, as the
// kubelet's atomic writer does: the files are written into a new hidden
// generation directory ("..<timestamp>"), the "..data" symlink is switched to
// it by a rename, and every top-level name is a symlink into "..data". Names no
// longer projected and older generations are removed. Nothing is written when
// the current generation already holds exactly files.
func writeFiles(dir string, files map[string][]byte, modes map[string]os.FileMode) error {
	for p := range files {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "..") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
			return fmt.Errorf("invalid volume file path %q", p)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if sameFiles(filepath.Join(dir, dataLink), files, modes) {
		return nil
	}
	gen, err := os.MkdirTemp(dir, "..gen_")
	if err != nil {
		return err
	}
	if err := os.Chmod(gen, 0o755); err != nil {
		return err
	}
	tops := map[string]bool{}
	for p, data := range files {
		full := filepath.Join(gen, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o600); err != nil {
			return err
		}
		if err := os.Chmod(full, modes[p]); err != nil {
			return err
		}
		top, _, _ := strings.Cut(filepath.ToSlash(filepath.Clean(p)), "/")
		tops[top] = true
	}
	tmp := filepath.Join(dir, dataLink+"_tmp")
	_ = os.Remove(tmp)
	if err := os.Symlink(filepath.Base(gen), tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataLink)); err != nil {
		return fmt.Errorf("switch %s: %w", dataLink, err)
	}
	for top := range tops {
		link, target := filepath.Join(dir, top), filepath.Join(dataLink, top)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		_ = os.RemoveAll(link)
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if n == dataLink || n == filepath.Base(gen) || tops[n] {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, n))
	}
	return nil
}

// sameFiles reports whether dir holds exactly files, with their modes.
func sameFiles(dir string, files map[string][]byte, modes map[string]os.FileMode) bool {
	n := 0
	err := filepath.WalkDir(dir+"/", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		want, ok := files[rel]
		if !ok {
			return fs.ErrNotExist
		}
		fi, err := d.Info()
		if err != nil || fi.Mode() != modes[rel] {
			return fs.ErrInvalid
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			return fs.ErrInvalid
		}
		n++
		return nil
	})
	return err == nil && n == len(files)
}
