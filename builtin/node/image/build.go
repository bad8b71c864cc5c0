package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Media types and annotations written by Build.
const (
	MediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	MediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	MediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar"

	// AnnotationImageName carries the full image name containerd imports under.
	AnnotationImageName = "io.containerd.image.name"
	// AnnotationRefName is the OCI layout's reference (the tag).
	AnnotationRefName = "org.opencontainers.image.ref.name"
)

// defaultPath is the PATH of images built by Build, as in Docker's defaults.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// BuildOptions configure Build. Zero values mean defaults.
type BuildOptions struct {
	// Binary is the host path of a statically linked Linux executable. Required.
	Binary string
	// Name is the image reference ("hello", "example.com/demo/hello:v1"); it is
	// stored normalized ("docker.io/library/hello:latest"). Required.
	Name string
	// Path is where the binary lands in the image (default /bin/<base name of Binary>).
	Path string
	// Entrypoint replaces the image's entrypoint (default [Path]); set it to
	// an empty, non-nil slice for an image with only Cmd (as busybox's).
	Entrypoint []string
	// Cmd is the image's default arguments after the entrypoint (default none).
	Cmd []string
	// Links are symbolic links in the image, absolute link path to target (a
	// relative target resolves from the link's directory), e.g. busybox's
	// applets: "/bin/sh" -> "busybox".
	Links map[string]string
	// Files are more host files in the image, absolute image path to host
	// path (e.g. /bin/busybox beside agnhost); each keeps its mode bits,
	// setuid, setgid and sticky included. Every file is owned by root (0:0),
	// as a Dockerfile's COPY leaves them: a setuid file runs as root.
	Files map[string]string
	// Env is added to the image's environment after PATH.
	Env []string
	// Out receives the archive. Required.
	Out io.Writer
}

// Descriptor is an OCI content descriptor.
type Descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *Platform         `json:"platform,omitempty"`
}

// Platform is an OCI platform.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// Index is an OCI image index (index.json).
type Index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []Descriptor `json:"manifests"`
}

// Manifest is an OCI image manifest.
type Manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        Descriptor   `json:"config"`
	Layers        []Descriptor `json:"layers"`
}

// Config is the subset of the OCI image config Build writes.
type Config struct {
	Architecture string        `json:"architecture"`
	OS           string        `json:"os"`
	Config       ProcessConfig `json:"config"`
	RootFS       RootFS        `json:"rootfs"`
}

// ProcessConfig is the image's default process.
type ProcessConfig struct {
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	Env        []string `json:"Env,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

// RootFS lists the uncompressed layer digests.
type RootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

// BuildResult describes the image Build wrote.
type BuildResult struct {
	// Name is the normalized image name.
	Name string
	// Manifest is the manifest's descriptor (its digest identifies the image).
	Manifest Descriptor
}

func (o *BuildOptions) complete() {
	if o.Path == "" && o.Binary != "" {
		o.Path = "/bin/" + path.Base(o.Binary)
	}
}

func (o *BuildOptions) validate() error {
	var errs []error
	if o.Binary == "" {
		errs = append(errs, errors.New("binary is required"))
	}
	if o.Name == "" {
		errs = append(errs, errors.New("name is required"))
	} else if !validName(o.Name) {
		errs = append(errs, fmt.Errorf("invalid image name %q (want [registry/]path[:tag], path in lower case)", o.Name))
	}
	if o.Out == nil {
		errs = append(errs, errors.New("out is required"))
	}
	if o.Path != "" && (!path.IsAbs(o.Path) || path.Clean(o.Path) != o.Path || o.Path == "/") {
		errs = append(errs, fmt.Errorf("path %q must be a clean absolute file path", o.Path))
	}
	for p, src := range o.Files {
		if !path.IsAbs(p) || path.Clean(p) != p || p == "/" || p == o.Path || src == "" {
			errs = append(errs, fmt.Errorf("file %q from %q: want a clean absolute image path other than the binary's, and a host file", p, src))
		} else if _, ok := o.Links[p]; ok {
			errs = append(errs, fmt.Errorf("file %q is also a link", p))
		}
	}
	for link, target := range o.Links {
		if !path.IsAbs(link) || path.Clean(link) != link || link == "/" || link == o.Path || target == "" {
			errs = append(errs, fmt.Errorf("link %q -> %q: want a clean absolute link path other than the binary's, and a target", link, target))
		}
	}
	return errors.Join(errs...)
}

// Build writes an OCI image archive holding opts.Binary as the image's only file
// (plus /tmp) and entrypoint. The binary must be a statically linked Linux ELF
// executable; its architecture becomes the image's platform.
func Build(ctx context.Context, opts BuildOptions) (BuildResult, error) {
	opts.complete()
	if err := opts.validate(); err != nil {
		return BuildResult{}, fmt.Errorf("build image: %w", err)
	}
	bin, err := os.ReadFile(opts.Binary)
	if err != nil {
		return BuildResult{}, fmt.Errorf("build image: read binary: %w", err)
	}
	binStat, err := os.Stat(opts.Binary)
	if err != nil {
		return BuildResult{}, fmt.Errorf("build image: read binary: %w", err)
	}
	arch, err := checkStatic(bin)
	if err != nil {
		return BuildResult{}, fmt.Errorf("build image: %s: %w", opts.Binary, err)
	}
	if err := ctx.Err(); err != nil {
		return BuildResult{}, fmt.Errorf("build image: %w", err)
	}
	name := Normalize(opts.Name)

	extra := map[string]extraFile{}
	for p, src := range opts.Files {
		st, err := os.Stat(src)
		if err != nil {
			return BuildResult{}, fmt.Errorf("build image: file %s: %w", p, err)
		}
		if !st.Mode().IsRegular() {
			return BuildResult{}, fmt.Errorf("build image: file %s: %s is not a regular file", p, src)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return BuildResult{}, fmt.Errorf("build image: file %s: %w", p, err)
		}
		extra[p] = extraFile{mode: tarMode(st.Mode()), data: data}
	}
	// The binary is 0755 whatever its host mode, plus its setuid, setgid
	// and sticky bits (a chmod +s binary, as upstream's nonewprivs image).
	binMode := 0o755 | tarMode(binStat.Mode())&^0o777
	layer, err := layerTar(opts.Path, extraFile{mode: binMode, data: bin}, extra, opts.Links)
	if err != nil {
		return BuildResult{}, fmt.Errorf("build image: write layer: %w", err)
	}
	layerDesc := describe(MediaTypeLayer, layer)

	entrypoint := []string{opts.Path}
	if opts.Entrypoint != nil {
		entrypoint = opts.Entrypoint
	}
	config, err := json.Marshal(Config{
		Architecture: arch,
		OS:           "linux",
		Config: ProcessConfig{
			Entrypoint: entrypoint,
			Cmd:        opts.Cmd,
			Env:        append([]string{defaultPath}, opts.Env...),
			WorkingDir: "/",
		},
		RootFS: RootFS{Type: "layers", DiffIDs: []string{layerDesc.Digest}},
	})
	if err != nil {
		return BuildResult{}, fmt.Errorf("build image: encode config: %w", err)
	}
	configDesc := describe(MediaTypeConfig, config)

	manifest, err := json.Marshal(Manifest{
		SchemaVersion: 2,
		MediaType:     MediaTypeManifest,
		Config:        configDesc,
		Layers:        []Descriptor{layerDesc},
	})
	if err != nil {
		return BuildResult{}, fmt.Errorf("build image: encode manifest: %w", err)
	}
	manifestDesc := describe(MediaTypeManifest, manifest)
	manifestDesc.Platform = &Platform{Architecture: arch, OS: "linux"}
	manifestDesc.Annotations = map[string]string{AnnotationImageName: name, AnnotationRefName: refName(name)}

	index, err := json.Marshal(Index{SchemaVersion: 2, MediaType: MediaTypeIndex, Manifests: []Descriptor{manifestDesc}})
	if err != nil {
		return BuildResult{}, fmt.Errorf("build image: encode index: %w", err)
	}

	tw := tar.NewWriter(opts.Out)
	files := []struct {
		name string
		data []byte
	}{
		{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{"index.json", index},
		{blobPath(layerDesc.Digest), layer},
		{blobPath(configDesc.Digest), config},
		{blobPath(manifestDesc.Digest), manifest},
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: epoch}); err != nil {
			return BuildResult{}, fmt.Errorf("build image: write archive: %w", err)
		}
	}
	for _, f := range files {
		if err := writeFile(tw, f.name, 0o644, f.data); err != nil {
			return BuildResult{}, fmt.Errorf("build image: write archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return BuildResult{}, fmt.Errorf("build image: write archive: %w", err)
	}
	return BuildResult{Name: name, Manifest: manifestDesc}, nil
}

var epoch = time.Unix(0, 0).UTC()

// extraFile is a file of BuildOptions.Files, read.
type extraFile struct {
	mode int64
	data []byte
}

// layerTar returns an uncompressed layer with the binary at p, the extra files
// and the links (each sorted, so a build is reproducible), their parent
// directories and /tmp.
func layerTar(p string, bin extraFile, files map[string]extraFile, links map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{"tmp": true}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777, ModTime: epoch}); err != nil {
		return nil, err
	}
	parents := func(rel string) error {
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/")
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return err
			}
		}
		return nil
	}
	rel := strings.TrimPrefix(p, "/")
	if err := parents(rel); err != nil {
		return nil, err
	}
	if err := writeFile(tw, rel, bin.mode, bin.data); err != nil {
		return nil, err
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		frel := strings.TrimPrefix(f, "/")
		if err := parents(frel); err != nil {
			return nil, err
		}
		if err := writeFile(tw, frel, files[f].mode, files[f].data); err != nil {
			return nil, err
		}
	}
	for _, link := range slices.Sorted(maps.Keys(links)) {
		lrel := strings.TrimPrefix(link, "/")
		if err := parents(lrel); err != nil {
			return nil, err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: lrel, Linkname: links[link], Mode: 0o777, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tarMode is a file mode in a tar header's terms: the permission bits and
// the setuid (04000), setgid (02000) and sticky (01000) bits.
func tarMode(m fs.FileMode) int64 {
	mode := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}

func describe(mediaType string, data []byte) Descriptor {
	sum := sha256.Sum256(data)
	return Descriptor{MediaType: mediaType, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: int64(len(data))}
}

func blobPath(digest string) string {
	return "blobs/sha256/" + strings.TrimPrefix(digest, "sha256:")
}

// refName is the tag (or digest) part of a normalized name, for the OCI layout.
func refName(name string) string {
	if i := strings.LastIndex(name, "@"); i >= 0 {
		return name[i+1:]
	}
	return name[strings.LastIndex(name, ":")+1:]
}

// validName is a light check of an image reference: no blanks or control
// characters, a lower-case repository path, a non-empty tag when one is given.
func validName(ref string) bool {
	if strings.ContainsFunc(ref, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return false
	}
	name, _, _ := strings.Cut(ref, "@")
	repo := name
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		repo = name[:i]
		if i == len(name)-1 {
			return false
		}
	}
	// The registry host may carry a port and upper case; the path may not.
	p := repo
	if host, rest, ok := strings.Cut(repo, "/"); ok && (strings.ContainsAny(host, ".:") || host == "localhost") {
		p = rest
	}
	return p != "" && strings.ToLower(p) == p && !strings.HasPrefix(p, "/") && !strings.HasSuffix(p, "/")
}

// checkStatic verifies bin is a statically linked Linux executable and returns
// its architecture in OCI terms.
func checkStatic(bin []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return "", fmt.Errorf("not a Linux executable: %w", err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return "", fmt.Errorf("not an executable (ELF type %s)", f.Type)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", errors.New("dynamically linked (build it with CGO_ENABLED=0 or -static): the image has no libraries")
		}
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	}
	return runtime.GOARCH, nil
}
