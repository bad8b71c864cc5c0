package image_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/image"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"hello":                             "docker.io/library/hello:latest",
		"hello:v1":                          "docker.io/library/hello:v1",
		"team/hello":                        "docker.io/team/hello:latest",
		"docker.io/library/hello:latest":    "docker.io/library/hello:latest",
		"example.com/a/b":                   "example.com/a/b:latest",
		"example.com:5000/a/b:v2":           "example.com:5000/a/b:v2",
		"localhost/x":                       "localhost/x:latest",
		"converge.test/helper:latest":       "converge.test/helper:latest",
		"hello@sha256:abc":                  "docker.io/library/hello@sha256:abc",
		"example.com/a@sha256:abc":          "example.com/a@sha256:abc",
		"example.com:5000/a:tag@sha256:abc": "example.com:5000/a:tag@sha256:abc",
		"":                                  "",
	} {
		if got := image.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// staticBinary builds a tiny static program once per test.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() { println(\"hi\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is required: %v", err)
	}
	out := filepath.Join(dir, "hello")
	cmd := exec.Command(gobin, "build", "-o", out, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

func untar(t *testing.T, r io.Reader) (map[string][]byte, map[string]*tar.Header) {
	t.Helper()
	files, headers := map[string][]byte{}, map[string]*tar.Header{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, headers
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], headers[h.Name] = b, h
	}
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// blob returns a blob after checking its digest and size against the descriptor.
func blob(t *testing.T, files map[string][]byte, d image.Descriptor) []byte {
	t.Helper()
	b, ok := files["blobs/sha256/"+strings.TrimPrefix(d.Digest, "sha256:")]
	if !ok {
		t.Fatalf("blob %s missing", d.Digest)
	}
	if digestOf(b) != d.Digest || int64(len(b)) != d.Size {
		t.Fatalf("blob %s: digest %s size %d, descriptor says size %d", d.Digest, digestOf(b), len(b), d.Size)
	}
	return b
}

func TestBuild(t *testing.T) {
	t.Parallel()
	bin := staticBinary(t)
	binBytes, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	res, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "demo/hello:v1", Out: &buf, Cmd: []string{"--flag"}, Env: []string{"A=b"}})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if res.Name != "docker.io/demo/hello:v1" {
		t.Errorf("Name = %q", res.Name)
	}
	archive := buf.Bytes()
	files, headers := untar(t, bytes.NewReader(archive))

	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", files["oci-layout"])
	}
	var index image.Index
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatalf("index.json: %v", err)
	}
	if index.SchemaVersion != 2 || index.MediaType != image.MediaTypeIndex || len(index.Manifests) != 1 {
		t.Fatalf("index = %+v", index)
	}
	md := index.Manifests[0]
	if md.Annotations[image.AnnotationImageName] != "docker.io/demo/hello:v1" || md.Annotations[image.AnnotationRefName] != "v1" {
		t.Errorf("manifest annotations = %v", md.Annotations)
	}
	if md.Platform == nil || md.Platform.OS != "linux" || md.Platform.Architecture == "" {
		t.Errorf("platform = %+v", md.Platform)
	}
	if md.Digest != res.Manifest.Digest {
		t.Errorf("result digest %s, index says %s", res.Manifest.Digest, md.Digest)
	}
	var manifest image.Manifest
	if err := json.Unmarshal(blob(t, files, md), &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.SchemaVersion != 2 || manifest.MediaType != image.MediaTypeManifest || manifest.Config.MediaType != image.MediaTypeConfig ||
		len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != image.MediaTypeLayer {
		t.Fatalf("manifest = %+v", manifest)
	}
	var config image.Config
	if err := json.Unmarshal(blob(t, files, manifest.Config), &config); err != nil {
		t.Fatal(err)
	}
	layer := blob(t, files, manifest.Layers[0])
	want := image.Config{
		Architecture: md.Platform.Architecture, OS: "linux",
		Config: image.ProcessConfig{
			Entrypoint: []string{"/bin/hello"}, Cmd: []string{"--flag"}, WorkingDir: "/",
			Env: []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "A=b"},
		},
		RootFS: image.RootFS{Type: "layers", DiffIDs: []string{digestOf(layer)}}, // uncompressed: diff ID = digest
	}
	if diff := cmp.Diff(want, config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	lfiles, lheaders := untar(t, bytes.NewReader(layer))
	if !bytes.Equal(lfiles["bin/hello"], binBytes) || lheaders["bin/hello"].Mode != 0o755 {
		t.Errorf("layer bin/hello: %d bytes, mode %o", len(lfiles["bin/hello"]), lheaders["bin/hello"].Mode)
	}
	if h := lheaders["tmp/"]; h == nil || h.Typeflag != tar.TypeDir || h.Mode != 0o1777 {
		t.Errorf("layer has no sticky /tmp: %+v", h)
	}
	if h := lheaders["bin/"]; h == nil || h.Typeflag != tar.TypeDir {
		t.Errorf("layer has no bin/ directory")
	}
	for name, h := range headers {
		if !h.ModTime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s has mtime %v, want the epoch (reproducible builds)", name, h.ModTime)
		}
	}

	// Same input, same bytes.
	var again bytes.Buffer
	if _, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "demo/hello:v1", Out: &again, Cmd: []string{"--flag"}, Env: []string{"A=b"}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(archive, again.Bytes()) {
		t.Error("Build is not reproducible")
	}

	// Path option.
	var custom bytes.Buffer
	if _, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "x", Path: "/opt/app/run", Out: &custom}); err != nil {
		t.Fatal(err)
	}
	files, _ = untar(t, &custom)
	json.Unmarshal(files["index.json"], &index)
	json.Unmarshal(blob(t, files, index.Manifests[0]), &manifest)
	json.Unmarshal(blob(t, files, manifest.Config), &config)
	lfiles, lheaders = untar(t, bytes.NewReader(blob(t, files, manifest.Layers[0])))
	if !slices.Equal(config.Config.Entrypoint, []string{"/opt/app/run"}) || lfiles["opt/app/run"] == nil || lheaders["opt/"] == nil || lheaders["opt/app/"] == nil {
		t.Errorf("custom path: entrypoint %q, layer files %v", config.Config.Entrypoint, slices.Sorted(func(yield func(string) bool) {
			for k := range lheaders {
				if !yield(k) {
					return
				}
			}
		}))
	}
}

// TestBuildLinksAndEntrypoint: extra files and symbolic links land in the
// layer (sorted, with their directories) and an empty Entrypoint leaves only
// Cmd, as upstream's busybox image has.
func TestBuildLinksAndEntrypoint(t *testing.T) {
	t.Parallel()
	bin := staticBinary(t)
	var buf bytes.Buffer
	_, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "busybox", Path: "/bin/busybox",
		Entrypoint: []string{}, Cmd: []string{"sh"},
		Links: map[string]string{"/bin/sh": "busybox", "/usr/bin/env": "/bin/busybox", "/agnhost-2": "agnhost"},
		Files: map[string]string{"/etc/tool": bin}, Out: &buf})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	files, _ := untar(t, &buf)
	var (
		index    image.Index
		manifest image.Manifest
		config   image.Config
	)
	json.Unmarshal(files["index.json"], &index)
	json.Unmarshal(blob(t, files, index.Manifests[0]), &manifest)
	json.Unmarshal(blob(t, files, manifest.Config), &config)
	if config.Config.Entrypoint != nil || !slices.Equal(config.Config.Cmd, []string{"sh"}) {
		t.Errorf("entrypoint %q cmd %q, want none and [sh]", config.Config.Entrypoint, config.Config.Cmd)
	}
	tr := tar.NewReader(bytes.NewReader(blob(t, files, manifest.Layers[0])))
	var names []string
	links := map[string]string{}
	modes := map[string]int64{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		modes[h.Name] = h.Mode
		if h.Typeflag == tar.TypeSymlink {
			links[h.Name] = h.Linkname
		}
	}
	want := map[string]string{"agnhost-2": "agnhost", "bin/sh": "busybox", "usr/bin/env": "/bin/busybox"}
	if !maps.Equal(links, want) {
		t.Errorf("links %v, want %v", links, want)
	}
	if st, err := os.Stat(bin); err != nil || modes["etc/tool"] != int64(st.Mode().Perm()) || slices.Index(names, "etc/") > slices.Index(names, "etc/tool") {
		t.Errorf("extra file etc/tool: mode %o, layer order %v", modes["etc/tool"], names)
	}
	// Directories before what they hold: bin/ before bin/sh, usr/bin/ before usr/bin/env.
	if i, j := slices.Index(names, "usr/bin/"), slices.Index(names, "usr/bin/env"); i < 0 || i > j || slices.Index(names, "usr/") > i {
		t.Errorf("layer order %v", names)
	}

	if _, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "x", Links: map[string]string{"bin/sh": "busybox"}, Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "clean absolute link path") {
		t.Errorf("relative link: Build = %v", err)
	}
	if _, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "x", Files: map[string]string{"/etc/x": t.TempDir()}, Out: io.Discard}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory as a file: Build = %v", err)
	}
}

// TestBuildKeepsSpecialModes: setuid, setgid and sticky bits survive into the
// layer, on the binary and on extra files, all owned by root, as upstream's
// nonewprivs image (COPY, then chmod +s) has them.
func TestBuildKeepsSpecialModes(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(staticBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, tool := filepath.Join(dir, "nnp"), filepath.Join(dir, "tool")
	for p, mode := range map[string]os.FileMode{bin: 0o755 | os.ModeSetuid | os.ModeSetgid, tool: 0o750 | os.ModeSetuid | os.ModeSticky} {
		if err := os.WriteFile(p, src, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "nonewprivs", Path: "/usr/local/bin/nnp",
		Files: map[string]string{"/bin/tool": tool}, Out: &buf}); err != nil {
		t.Fatalf("Build: %v", err)
	}
	files, _ := untar(t, &buf)
	var (
		index    image.Index
		manifest image.Manifest
	)
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(blob(t, files, index.Manifests[0]), &manifest); err != nil {
		t.Fatal(err)
	}
	_, headers := untar(t, bytes.NewReader(blob(t, files, manifest.Layers[0])))
	for name, want := range map[string]int64{"usr/local/bin/nnp": 0o6755, "bin/tool": 0o5750} {
		h := headers[name]
		if h == nil || h.Mode != want || h.Uid != 0 || h.Gid != 0 {
			t.Errorf("layer %s: header %+v, want mode %o owned by 0:0", name, h, want)
		}
	}
}

func TestBuildRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(text, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		opts image.BuildOptions
		want string
	}{
		{"no binary", image.BuildOptions{Name: "x", Out: io.Discard}, "binary is required"},
		{"no name", image.BuildOptions{Binary: text, Out: io.Discard}, "name is required"},
		{"no out", image.BuildOptions{Binary: text, Name: "x"}, "out is required"},
		{"upper-case name", image.BuildOptions{Binary: text, Name: "Hello", Out: io.Discard}, "invalid image name"},
		{"relative path", image.BuildOptions{Binary: text, Name: "x", Path: "bin/x", Out: io.Discard}, "clean absolute"},
		{"missing file", image.BuildOptions{Binary: filepath.Join(dir, "nope"), Name: "x", Out: io.Discard}, "no such file"},
		{"not ELF", image.BuildOptions{Binary: text, Name: "x", Out: io.Discard}, "not a Linux executable"},
		{"dynamic", image.BuildOptions{Binary: "/bin/ls", Name: "x", Out: io.Discard}, "dynamically linked"},
	} {
		_, err := image.Build(t.Context(), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Build = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestImport imports Build's OCI archive and a `docker save`-style archive
// into a private containerd.
func TestImport(t *testing.T) {
	dir, err := os.MkdirTemp("", "cvg-ctd-")
	if err != nil {
		t.Fatal(err)
	}
	dctx, stop := context.WithCancel(context.Background())
	d, err := daemon.Start(dctx, daemon.Options{Dir: dir})
	if err != nil {
		stop()
		t.Fatalf("start containerd: %v", err) // CI installs it (hack/ci-deps.sh)
	}
	c, err := client.New(d.Address(), client.WithDefaultNamespace("converge-image-test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		stop()
		_ = d.Wait()
		_ = os.RemoveAll(dir)
	})

	bin := staticBinary(t)
	var buf bytes.Buffer
	res, err := image.Build(t.Context(), image.BuildOptions{Binary: bin, Name: "hello", Out: &buf})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	names, err := image.Import(t.Context(), c, bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	t.Logf("imported %v in %v", names, time.Since(t0))
	if !slices.Equal(names, []string{"docker.io/library/hello:latest"}) {
		t.Errorf("names = %q", names)
	}
	img, err := c.GetImage(t.Context(), "docker.io/library/hello:latest")
	if err != nil {
		t.Fatal(err)
	}
	if string(img.Target().Digest) != res.Manifest.Digest {
		t.Errorf("stored target %s, built %s", img.Target().Digest, res.Manifest.Digest)
	}
	if err := img.Unpack(t.Context(), "native"); err != nil {
		t.Errorf("unpack: %v", err)
	}

	// From a file, as `converge image import FILE` does.
	archivePath := filepath.Join(t.TempDir(), "hello.tar")
	if err := os.WriteFile(archivePath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	names, err = image.ImportFile(t.Context(), image.ImportFileOptions{Address: d.Address(), Namespace: "converge-image-test", Path: archivePath})
	if err != nil || !slices.Equal(names, []string{"docker.io/library/hello:latest"}) {
		t.Errorf("ImportFile = %q, %v", names, err)
	}
	if _, err := image.ImportFile(t.Context(), image.ImportFileOptions{Address: filepath.Join(dir, "nope.sock"), Path: archivePath}); err == nil || !strings.Contains(err.Error(), "is containerd running?") {
		t.Errorf("ImportFile without a daemon = %v", err)
	}

	// The same image as `docker save` writes it.
	names, err = image.Import(t.Context(), c, bytes.NewReader(dockerArchive(t, buf.Bytes(), "tools/hello:v2")))
	if err != nil {
		t.Fatalf("Import docker archive: %v", err)
	}
	if !slices.Equal(names, []string{"docker.io/tools/hello:v2"}) {
		t.Errorf("docker archive names = %q", names)
	}

	// An archive naming nothing: Build's, without the index annotations.
	files, _ := untar(t, bytes.NewReader(buf.Bytes()))
	var index image.Index
	json.Unmarshal(files["index.json"], &index)
	index.Manifests[0].Annotations = nil
	files["index.json"], _ = json.Marshal(index)
	var empty bytes.Buffer
	tw := tar.NewWriter(&empty)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if strings.HasSuffix(name, "/") {
			continue // directories
		}
		writeTar(t, tw, name, files[name])
	}
	tw.Close()
	if _, err := image.Import(t.Context(), c, &empty); !errors.Is(err, image.ErrNoImages) {
		t.Errorf("Import of an archive without images = %v, want ErrNoImages", err)
	}
	if _, err := image.Import(t.Context(), c, strings.NewReader("not a tar")); err == nil {
		t.Error("Import of garbage succeeded")
	}
}

// dockerArchive converts Build's OCI archive into the `docker save` layout:
// manifest.json, <config digest>.json, <layer digest>/layer.tar.
func dockerArchive(t *testing.T, oci []byte, tag string) []byte {
	t.Helper()
	files, _ := untar(t, bytes.NewReader(oci))
	var index image.Index
	var manifest image.Manifest
	json.Unmarshal(files["index.json"], &index)
	json.Unmarshal(blob(t, files, index.Manifests[0]), &manifest)
	hexOf := func(d string) string { return strings.TrimPrefix(d, "sha256:") }
	configName := hexOf(manifest.Config.Digest) + ".json"
	layerName := hexOf(manifest.Layers[0].Digest) + "/layer.tar"
	mj, _ := json.Marshal([]map[string]any{{"Config": configName, "RepoTags": []string{tag}, "Layers": []string{layerName}}})
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	writeTar(t, tw, "manifest.json", mj)
	writeTar(t, tw, configName, blob(t, files, manifest.Config))
	writeTar(t, tw, layerName, blob(t, files, manifest.Layers[0]))
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeTar(t *testing.T, tw *tar.Writer, name string, b []byte) {
	t.Helper()
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write(b); err != nil {
		t.Fatal(err)
	}
}
