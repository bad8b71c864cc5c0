// Package script is the tiny command language of the runtime conformance
// helper. The helper binary (runtimetest/helper, built by runtimetest.BuildHelper)
// interprets it on a real operating system; the simulated runtime interprets the
// same steps without any process, so both pass one conformance suite.
//
// A script is the helper's argument list: a sequence of verbs, each followed by
// a fixed number of arguments:
//
//	out TEXT         write TEXT and a newline to stdout
//	err TEXT         write TEXT and a newline to stderr
//	env NAME         write "NAME=<value>" to stdout ("NAME=" when unset)
//	pwd              write the working directory to stdout
//	cat PATH         write the file's lines to stdout (exit 2 when unreadable)
//	write PATH TEXT  create or replace the file with TEXT (exit 2 on failure)
//	sleep DURATION   wait (a Go duration, or "forever")
//	on-term CODE     from now on, SIGTERM prints "got SIGTERM" and exits CODE
//	ignore-term      from now on, SIGTERM is ignored
//	serve ADDR       serve HTTP on ADDR in the background ("GET /" → "ok",
//	                 "GET /healthz" → 200, "GET /fail" → 500)
//	exit CODE        exit with CODE now
//
// The end of the script exits 0. Until on-term or ignore-term, SIGTERM exits
// 143 (128+15), as an unhandled SIGTERM does in a container.
package script
