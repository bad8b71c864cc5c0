// Package nodeauth authenticates and authorizes requests to a node agent's
// HTTPS port as the kubelet does. A client certificate (verified against the
// cluster CA by the TLS layer) names the user (CN) and groups (O); otherwise
// a bearer token is checked with a TokenReview. The API server's node client
// (pki.NodeClientUser) and members of system:masters may use every path, as
// before; any other user needs a SubjectAccessReview allowing verb get (post
// for POST, ...) on nodes/<subresource> named after the node: metrics for
// /metrics and /metrics/*, stats for /stats/*, proxy for everything else
// (logs, exec, attach, port-forward), as the kubelet maps them. Answers are
// cached for CacheTTL (10 s), so a removed RoleBinding or deleted token
// takes effect within it. A request without TLS (an insecure control plane)
// passes unchecked.
package nodeauth
