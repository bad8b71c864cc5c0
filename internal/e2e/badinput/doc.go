// Package badinput is the bad-input acceptance suite of the API server (issue 10):
// malformed, truncated and random bodies (JSON, YAML, Kubernetes protobuf), wrong
// kinds, versions and resources, oversized bodies, invalid names and labels, deep
// nesting, bad query parameters, bad patches of every type, bad DeleteOptions,
// wrong subresource bodies, and a burst of concurrent malformed requests, all
// against a real in-process control plane (testenv).
//
// The contract checked for every rejected request: a 4xx answer whose body is a
// Kubernetes Status (kind Status, apiVersion v1, status Failure, code equal to the
// HTTP status, a reason); no 5xx (the one documented exception is 504 Timeout
// with cause ResourceVersionTooLarge for a resourceVersion ahead of the store,
// WIRE.md §10); no change to stored state (the etcd revision does not move); and
// a healthy server afterwards.
//
// Random inputs come from a seeded generator: the seed is logged, and
// BADINPUT_SEED=<n> replays a run.
package badinput
