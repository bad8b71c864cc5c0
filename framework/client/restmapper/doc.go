// Package restmapper maps kinds to the REST resources that serve them, learnt from
// the API server's discovery documents (GET /api, /apis, /api/v1, /apis/G/V).
//
// Contract:
//   - Lazy: the group list is read on first use, and each group-version's resource
//     list only when a kind or resource of it is first asked for.
//   - Self-healing: a miss (unknown group-version, or a kind missing from a known
//     group-version) re-reads discovery once and looks again, so resources added
//     after start-up (a new CRD) are found without a restart. Re-reads are
//     rate-limited (at most one per MinRefreshInterval, 1 s by default, per
//     group-version and for the group list); within that window a miss fails
//     fast with a NoKindMatchError.
//   - Subresources (pods/status, deployments/scale) are not mapped.
//
// A Mapper is safe for concurrent use.
package restmapper
