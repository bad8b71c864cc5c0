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
			growStack()
		}
		h.ServeHTTP(w, r)
	})
}

// growStack has a stackReserve-byte frame, so calling it grows the stack.
// Go zeroes the frame (≈2 µs on a fresh 32 KiB stack under load); an
// assembly function with an unwritten frame saved ≈0.5 µs more per request,
// not worth assembly files to keep.
//
//go:noinline
func growStack() {
	var frame [stackReserve]byte
	touch(frame[:])
}

// touch keeps growStack's frame from being optimized away.
//
//go:noinline
func touch(b []byte) { b[0] = 1 }
