package image

import "strings"

// Normalize returns the fully qualified form of an image reference, the way
// Docker and Kubernetes resolve it: a missing registry becomes docker.io, a
// single-component Docker Hub path gains "library/", and a missing tag (with no
// digest) becomes ":latest". "hello" → "docker.io/library/hello:latest";
// "example.com/a/b@sha256:…" is returned unchanged. It does not validate.
func Normalize(ref string) string {
	if ref == "" {
		return ref
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	domain, rest, hasSlash := strings.Cut(name, "/")
	if !hasSlash || (!strings.ContainsAny(domain, ".:") && domain != "localhost") {
		domain, rest = "docker.io", name
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	// A tag is a ':' after the last '/'.
	if !hasDigest && !strings.Contains(rest[strings.LastIndex(rest, "/")+1:], ":") {
		rest += ":latest"
	}
	out := domain + "/" + rest
	if hasDigest {
		out += "@" + digest
	}
	return out
}
