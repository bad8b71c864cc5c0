package cri

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Credential authenticates to one registry host. Either Username and Password
// (basic auth, or exchanged for a bearer token when the registry asks for
// one), or IdentityToken (an OAuth2 refresh token), or RegistryToken (a
// bearer token sent as is).
type Credential struct {
	// Host is the registry host the credential is for ("registry.example.com",
	// "127.0.0.1:5000", "docker.io"); the runtime uses it only for that host.
	Host          string
	Username      string
	Password      string
	IdentityToken string
	RegistryToken string
}

// Image is an image a runtime holds.
type Image struct {
	// ID identifies the image independently of its names: the digest of its
	// config ("sha256:…"), as the CRI reports it.
	ID string
	// Names are the references that point at it, normalized
	// ("docker.io/library/busybox:1.36").
	Names []string
	// Digest is the manifest (or index) digest the names resolve to; a
	// container's imageID is Names[0]'s repository "@" Digest.
	Digest string
	// Size is the image's size in bytes as the registry stores it (its
	// compressed content).
	Size int64
}

// PullResult is what a pull got.
type PullResult struct {
	Image Image
	// Duration is how long the pull took; Waited is how long this caller
	// waited, which is longer when it joined a pull already under way.
	Duration, Waited time.Duration
}

// ImageService is implemented by runtimes that pull images from registries
// (the containerd runtime); the agent finds it by type assertion. Runtimes
// without it (process, simulated) take whatever image reference they get.
// Images are named by references as written in pod specs ("busybox",
// "127.0.0.1:5000/demo/app:v1", "name@sha256:…"); implementations normalize
// them. Safe for concurrent use.
type ImageService interface {
	// PullImage pulls ref and makes it runnable. Concurrent pulls of the same
	// reference share one pull. creds are matched to the registry host by
	// Credential.Host (the first match is used). Registry failures come back
	// with the registry's words ("not found", "401 Unauthorized", "connection
	// refused").
	PullImage(ctx context.Context, ref string, creds []Credential) (PullResult, error)
	// ImageStatus reports the local image ref names; ok is false when absent.
	ImageStatus(ctx context.Context, ref string) (img Image, ok bool, err error)
	// ListImages returns every local image.
	ListImages(ctx context.Context) ([]Image, error)
	// RemoveImage removes the image ref names, or, given an Image.ID, every
	// name of that image. Removing an absent image is not an error.
	RemoveImage(ctx context.Context, ref string) error
}

// FsUsage is the usage of the filesystem holding images.
type FsUsage struct {
	// Path is a directory on that filesystem.
	Path string
	// UsedBytes and CapacityBytes are the filesystem's (not only the images').
	UsedBytes, CapacityBytes uint64
}

// ImageFS is implemented by runtimes whose images live on a local filesystem
// the agent can garbage-collect by disk usage (the containerd runtime).
type ImageFS interface {
	ImageFsUsage(ctx context.Context) (FsUsage, error)
}

// RegistryHost is the registry part of an image reference, as Docker and
// Kubernetes read it: the first path component when it has a "." or ":" or
// is "localhost", else "docker.io". "busybox" → "docker.io";
// "127.0.0.1:5000/a/b:v1" → "127.0.0.1:5000".
func RegistryHost(ref string) string {
	name, _, _ := strings.Cut(ref, "@")
	domain, _, ok := strings.Cut(name, "/")
	if !ok || (!strings.ContainsAny(domain, ".:") && domain != "localhost") {
		return "docker.io"
	}
	return canonicalHost(domain)
}

// SameRegistry reports whether two registry hosts (or Docker config keys such
// as "https://index.docker.io/v1/") name the same registry; Docker Hub's
// aliases (index.docker.io, registry-1.docker.io, registry.hub.docker.com)
// are docker.io.
func SameRegistry(a, b string) bool {
	return canonicalHost(a) == canonicalHost(b)
}

func canonicalHost(h string) string {
	h = strings.TrimPrefix(strings.TrimPrefix(h, "https://"), "http://")
	h, _, _ = strings.Cut(h, "/")
	switch h {
	case "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return "docker.io"
	}
	return h
}

// DecodeAuth decodes a Docker config "auth" field: base64 of "user:password".
func DecodeAuth(s string) (user, pass string, err error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", "", fmt.Errorf("auth is not base64: %w", err)
	}
	user, pass, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", errors.New("auth is not base64 of user:password")
	}
	return user, pass, nil
}
