// Package errors defines the typed API errors of Converge. Each carries a
// Kubernetes Status (code, reason, message, details) so the API server can write it
// verbatim and clients can classify it with IsNotFound, IsConflict, and so on.
// Message texts follow Kubernetes' so kubectl prints what users expect.
package errors
