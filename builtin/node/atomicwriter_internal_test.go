package node

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "vol")
	var dirIno uint64
	steps := []struct {
		name  string
		files map[string][]byte
		modes map[string]os.FileMode
		same  bool // no new generation
	}{
		{name: "first", files: map[string][]byte{"data-1": []byte("value-1"), "nested/data-2": []byte("value-2")},
			modes: map[string]os.FileMode{"data-1": 0o644, "nested/data-2": 0o400}},
		{name: "unchanged", files: map[string][]byte{"data-1": []byte("value-1"), "nested/data-2": []byte("value-2")},
			modes: map[string]os.FileMode{"data-1": 0o644, "nested/data-2": 0o400}, same: true},
		{name: "value updated, key removed, key added", files: map[string][]byte{"data-1": []byte("value-1b"), "data-3": []byte("value-3")},
			modes: map[string]os.FileMode{"data-1": 0o644, "data-3": 0o644}},
		{name: "mode changed", files: map[string][]byte{"data-1": []byte("value-1b"), "data-3": []byte("value-3")},
			modes: map[string]os.FileMode{"data-1": 0o600, "data-3": 0o644}},
		{name: "emptied (optional source deleted)", files: map[string][]byte{}, modes: map[string]os.FileMode{}},
	}
	prevGen := ""
	for _, st := range steps {
		if err := writeFiles(dir, st.files, st.modes); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var s syscall.Stat_t
		if err := syscall.Stat(dir, &s); err != nil {
			t.Fatal(err)
		}
		if dirIno == 0 {
			dirIno = s.Ino
		} else if s.Ino != dirIno {
			t.Errorf("%s: the volume directory was replaced (a bind mount of it would not see the update)", st.name)
		}
		gen, err := os.Readlink(filepath.Join(dir, dataLink))
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if (gen == prevGen) != st.same {
			t.Errorf("%s: generation %q after %q, want same=%v", st.name, gen, prevGen, st.same)
		}
		prevGen = gen
		for p, want := range st.files {
			got, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: %s = %q, %v; want %q", st.name, p, got, err, want)
			}
			fi, err := os.Stat(filepath.Join(dir, p))
			if err != nil || fi.Mode() != st.modes[p] {
				t.Errorf("%s: %s mode %v, want %v", st.name, p, fi.Mode(), st.modes[p])
			}
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := []string{dataLink, gen}
		for p := range st.files {
			top, _ := filepath.Split(p)
			if top == "" {
				top = p
			} else {
				top = filepath.Clean(top)
			}
			if !slices.Contains(want, top) {
				want = append(want, top)
			}
		}
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s: entries %q, want %q", st.name, names, want)
		}
	}
}

func TestWriteFilesRejectsEscapingPaths(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"../x", "/etc/passwd", "a/../../x", "..data", ""} {
		if err := writeFiles(t.TempDir(), map[string][]byte{p: nil}, map[string]os.FileMode{p: 0o644}); err == nil {
			t.Errorf("writeFiles accepted %q", p)
		}
	}
}
