// Package healthz serves named health checks over HTTP, in the style of the
// Kubernetes /healthz, /livez and /readyz endpoints.
//
// A Handler holds named Checkers. GET <path> runs them all and answers 200 "ok"
// when every check passes, otherwise 500 listing the failures; "?verbose" lists
// every check; "?exclude=name" skips a check; GET <path>/<name> runs one check
// (404 if unknown). Names may hold slashes (poststarthook/<hook>). Checks run on the request's goroutine with its context and
// must be quick.
package healthz
