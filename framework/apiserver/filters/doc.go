// Package filters holds the HTTP middleware that runs in front of the API
// server's routing: request info, authentication, audit, max-in-flight limits and
// authorization. Each filter is an http.Handler wrapping the next one; Chain
// assembles them in Kubernetes' order:
//
//	request info → audit → authentication → impersonation → priority and fairness or max in flight → authorization → handler
//
// Contracts:
//   - Authentication puts the *User into the request context (UserFrom). A
//     request whose context already carries a user (an in-process caller such as
//     the control plane's bootstrap) is not authenticated again; network requests
//     never carry one.
//   - Requests no authenticator accepts get 401 (Status Unauthorized), except the
//     public paths (/healthz, /livez, /readyz, /version and their sub-paths),
//     which run as system:anonymous.
//   - Impersonation (Impersonate-User, -Group, -Uid, -Extra-*) replaces the
//     user when the caller may "impersonate" each of them (403 otherwise).
//   - Authorization denies with 403 and Kubernetes' message
//     (`pods is forbidden: User "x" cannot list resource "pods" in API group "" in the namespace "default"`).
//   - Audit writes one JSON line (audit.k8s.io/v1 Event, stage ResponseComplete)
//     per request its policy selects; Secrets are never logged above Metadata.
//   - Max in flight answers 429 with Retry-After when the mutating or read-only
//     budget is exhausted, when the request's user already holds its share of
//     that budget (PerUserPercent), or when a watch would exceed the user's
//     watch limit; other long-running requests (logs, exec, ...) and
//     system:masters are exempt.
//   - Options.FlowControl (API Priority and Fairness, framework/apiserver/flowcontrol)
//     takes the place of the max-in-flight budgets when set; the per-user watch
//     limit still applies.
//
// Every filter is opt-in: with nothing configured the API server serves exactly
// as without this package.
package filters
