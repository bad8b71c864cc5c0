package cache

import "strings"

// NormalizeImageName returns the fully qualified form of an image reference
// the way the container runtime reports it: a missing registry becomes
// docker.io (with library/ for single-component names) and a missing tag
// :latest; digests are kept.
func NormalizeImageName(name string) string {
	if name == "" {
		return name
	}
	first, _, hasSlash := strings.Cut(name, "/")
	if !hasSlash {
		name = "docker.io/library/" + name
	} else if !strings.ContainsAny(first, ".:") && first != "localhost" {
		name = "docker.io/" + name
	}
	if strings.Contains(name, "@") {
		return name
	}
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.Contains(last, ":") {
		name += ":latest"
	}
	return name
}
