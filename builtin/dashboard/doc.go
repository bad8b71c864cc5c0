// Package dashboard serves Converge's web dashboard under /ui/ on the API
// server's port: static assets embedded in the binary (plain JavaScript
// modules and CSS, no toolchain, no CDN) and a same-origin proxy through which
// the browser talks to the API server as the logged-in user.
//
// # Who you are
//
// A browser logs in by exchanging a one-time login code (GET /ui/login?code=…,
// valid for CodeTTL, usable once) for a session cookie (Secure, HttpOnly,
// SameSite=Strict, path /ui/); the code leaves the address bar with the
// redirect that follows. Codes come from LoginCode (converge up prints a link
// for the admin) or from POST /ui/login/code, which a kubeconfig user calls
// with their own credentials (converge dashboard): the request is
// authenticated by the API server's authenticator. A bearer-token user's
// session carries that token; a client-certificate user's session carries a
// token this package issues for the same identity (user, groups, extra) and
// accepts back through TokenAuthenticator, which the API server's
// authentication chain includes. Such a token lives as long as its session.
//
// # The proxy
//
// /ui/api/PATH is the API server's PATH, served by the API server's own
// handler with only the session's credential attached (Authorization: Bearer),
// the browser's cookies and any other credentials or impersonation headers
// dropped: authentication, RBAC and admission decide every request exactly as
// for kubectl. Every request that is not GET or HEAD must carry the session's
// CSRF token in X-CSRF-Token (GET /ui/session returns it).
//
// # Controllers
//
// GET /ui/controllers streams the controller manager's reconcile counters
// (SetMetrics; the framework's controller_runtime_* series), one JSON line
// every 2 s, to users the API server allows to get /metrics.
//
// # Concurrency
//
// Dashboard is safe for concurrent use; its sessions, codes and issued tokens
// live in memory (one API server process): restarting the server logs every
// browser out.
package dashboard
