package apiserver

import "net/http"

// stackReserve is the stack, in bytes, that an HTTP/2 request's goroutine is
// given before the handler chain runs: the filters, the create path and the
// storage client need 16–32 KiB, and with this frame the runtime makes the
// stack 32 KiB at once.
const stackReserve = 24 << 10

// presizedStack runs h for HTTP/2 requests on a stack grown to hold
// stackReserve bytes first. Go's HTTP/2 server starts a goroutine for every
// request, with a small stack that the handler chain then outgrows several
// times; each growth copies the whole stack and walks every frame on it (in
// the secure create benchmark ≈20 µs of CPU per request, half of what
// separated HTTP/2 over TLS from HTTP/1.1). Growing while the stack is still
// shallow copies a few frames once. HTTP/1.1 requests are served on their
// connection's goroutine, whose stack has grown with its first request.
func presizedStack(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			growStack(false)
		}
		h.ServeHTTP(w, r)
	})
}

// growStack(false) grows the stack without writing to it: the function's
// frame holds stackReserve bytes, so its prologue makes the runtime grow the
// stack, and with use false it returns before the frame is zeroed (Go zeroes
// a local where it is declared). Zeroing the 24 KiB frame of a fresh stack
// was ≈2.5 µs of the ≈6 µs this call cost per request in the secure create
// benchmark's profile (an unwritten assembly frame saved the same; this needs
// no assembly). use true writes the frame, for comparison.
//
//go:noinline
func growStack(use bool) {
	if !use {
		return
	}
	var frame [stackReserve]byte
	touch(frame[:])
}

// touch keeps growStack's frame from being optimized away.
//
//go:noinline
func touch(b []byte) { b[0] = 1 }
