// Package e2etool holds what the end-to-end suites (internal/e2e/images,
// internal/e2e/kubectl, internal/faults) share: the repository's root, free
// loopback ports, the real kubectl binaries and go build. Its functions return
// errors; each suite turns them into its own failures (Gomega or testing.T).
package e2etool
