// Package pullspec holds the node agent's image-pull specs on real parts: a
// control plane (testenv), a private containerd (cri/containerd/daemon), the
// containerd runtime, and Distribution registries (internal/registrytest),
// open and behind htpasswd auth. It has no code of its own.
package pullspec
