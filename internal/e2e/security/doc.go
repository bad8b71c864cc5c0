// Package security holds the end-to-end security suite: whole control planes
// (controlplane, embedded etcd, the API server over HTTP or HTTPS)
// started with the security options, checked from the outside: encryption at
// rest read straight from etcd and key rotation across restarts, per-user
// fairness of the in-flight limits and watch counts, per-component identities
// with the Node authorizer and NodeRestriction.
//
// The package holds only tests; run them with
//
//	go test ./internal/e2e/security/
package security
