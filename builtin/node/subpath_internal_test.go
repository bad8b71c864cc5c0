package node

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSubPathSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(t *testing.T, root string)
		sub     string
		want    string // relative to the root; "" with err
		config  bool   // a CreateContainerConfigError
		err     string
		newMode fs.FileMode // mode of the created directory, when one is
	}{
		{name: "creates a missing directory with the root's mode", sub: "foo", want: "foo", newMode: 0o777},
		{name: "creates nested directories", sub: "mypath/foo", want: "mypath/foo", newMode: 0o777},
		{name: "keeps an existing directory", setup: mkdir("exists"), sub: "exists", want: "exists"},
		{name: "keeps an existing file", setup: writeFile("key", "v"), sub: "key", want: "key"},
		{name: "dot elements", sub: "./a/./b", want: "a/b", newMode: 0o777},
		{name: "setgid root", setup: chmod(0o2770), sub: "g", want: "g", newMode: 0o2770 | fs.ModeSetgid},
		{name: "absolute", sub: "/tmp", config: true, err: "error SubPath `/tmp` must not be an absolute path"},
		{name: "backstep", sub: "..", config: true, err: "unable to provision SubPath `..`: must not contain '..'"},
		{name: "nested backstep", sub: "logs/../../x", config: true, err: "must not contain '..'"},
		{name: "symlink inside the volume", setup: symlink("in", "target"), sub: "in/x", want: "target/x", newMode: 0o777},
		{name: "symlink out of the volume", setup: symlink("out", "/"), sub: "out/etc", config: true, err: "resolves outside of its volume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "vol")
			if err := os.Mkdir(root, 0o777); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(root, 0o777); err != nil {
				t.Fatal(err)
			}
			if tt.setup != nil {
				tt.setup(t, root)
			}
			got, err := subPathSource(root, tt.sub)
			if tt.err != "" {
				var ce configError
				if err == nil || !strings.Contains(err.Error(), tt.err) || errors.As(err, &ce) != tt.config {
					t.Fatalf("subPathSource(%q) = %q, %v; want error %q (config error %v)", tt.sub, got, err, tt.err, tt.config)
				}
				return
			}
			if err != nil {
				t.Fatalf("subPathSource(%q): %v", tt.sub, err)
			}
			if want := filepath.Join(root, tt.want); got != want {
				t.Errorf("subPathSource(%q) = %q, want %q", tt.sub, got, want)
			}
			if tt.newMode != 0 {
				fi, err := os.Stat(got)
				if err != nil {
					t.Fatal(err)
				}
				if m := fi.Mode() & (fs.ModePerm | fs.ModeSetgid); m != tt.newMode&(fs.ModePerm|fs.ModeSetgid) {
					t.Errorf("created %s with mode %v, want %v", got, m, tt.newMode)
				}
			}
		})
	}
}

func mkdir(name string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		if err := os.Mkdir(filepath.Join(root, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(name, data string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func chmod(mode uint32) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		if err := syscall.Chmod(root, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// symlink makes root/name a link to target (relative to root unless absolute).
func symlink(name, target string) func(*testing.T, string) {
	return func(t *testing.T, root string) {
		if !filepath.IsAbs(target) {
			if err := os.Mkdir(filepath.Join(root, target), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
}
