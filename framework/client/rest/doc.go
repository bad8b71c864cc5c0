// Package rest is the HTTP layer of the Converge client: connection Config (server,
// credentials, TLS, rate limits), an HTTP client built from it, and request
// execution that turns every non-2xx answer into an *errors.StatusError.
//
// Contract:
//   - Objects travel as JSON (Content-Type and Accept application/json).
//   - A non-2xx response becomes *apierrors.StatusError: the server's Status body
//     when there is one, otherwise a Status synthesised from the HTTP code with
//     Kubernetes' reason (404 → NotFound, 409 → Conflict, ...).
//   - Retries are bounded (MaxTries attempts, 5 by default): any request answered
//     429 or 5xx with a Retry-After header is retried after that many seconds
//     (capped at 10 s); idempotent requests (GET, HEAD) are also retried after
//     connection errors, with exponential back-off. The context bounds all waits.
//   - Failover: Config.Hosts adds servers of the same cluster after Config.Host.
//     Requests go to the current server, which stays the same while it answers
//     (sticky). A connection error or a 503 moves the client to the next server
//     (once, even when many requests fail together) and the request is retried
//     there: idempotent requests (GET, HEAD, OPTIONS) always, others only when
//     the connection could not be established (refused, unreachable: the request
//     was never sent) or the 503 carried Retry-After. A request that may have
//     reached a server (a reset or timeout after sending) is never re-sent unless
//     idempotent, so a create is never applied twice. Untried servers are tried
//     at once; after a full round the waits back off exponentially. Attempts are
//     bounded by max(MaxTries, servers+1). With one server nothing changes.
//   - HTTP/2 is used when an HTTPS server offers it (ALPN), so concurrent
//     requests and watches share one connection; requests that start before
//     the first connection to a host exists wait until it is established
//     instead of each dialling one. A silent HTTP/2 connection is pinged after
//     30 s and dropped when the ping goes unanswered for 15 s.
//   - Client-side rate limiting (a token bucket) is active only if Config.QPS > 0.
//   - A bearer token file is re-read whenever its modification time or size
//     changes, so rotated service-account tokens are picked up.
//
// A Client is safe for concurrent use.
package rest
