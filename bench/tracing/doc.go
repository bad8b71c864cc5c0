// Package tracing measures what tracing costs the default secure API server,
// each side a `converge apiserver` process of its own (issue 24's tracing
// goals: ≤ 2 % CPU at sampling 0, ≤ 10 % at 1.0).
package tracing
