// Package inprocess is an http.RoundTripper that serves each request with an
// http.Handler in the same process, for the components that run beside the API
// server in one process (`converge up`: controller manager, scheduler) and
// would otherwise reach it through loopback TLS, TCP and HTTP/2.
//
// Contracts:
//   - Every request goes through the handler it is given — for the API server
//     the whole filter chain: authentication, audit, priority and fairness,
//     authorization, admission. The transport carries one fixed identity
//     (filters.WithUser in the request context, which authentication accepts
//     from in-process callers only), the one the component's client
//     certificate would have proven, with system:authenticated added as the
//     x509 authenticator adds it. Credentials on the request
//     (Authorization) are not what authenticates it.
//   - Responses stream: RoundTrip returns once the handler wrote its header
//     (or returned); the body is read as the handler writes it, so watches work.
//     A handler writing faster than the body is read blocks once 1 MiB is
//     unread, as a network peer's flow control would block it.
//   - Closing the response body, or the request context ending, cancels the
//     handler's request context and fails its further writes.
//   - A panic in the handler (other than http.ErrAbortHandler, which ends the
//     body with an error as net/http aborts the stream) is not recovered here:
//     the API server's handler recovers its own.
//   - Hijacking (exec, attach, port-forward upgrades) is not supported; such
//     requests get an error from the handler's http.ResponseController.
package inprocess
