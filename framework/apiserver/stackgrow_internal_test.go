package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"unsafe"

	"github.com/go-logr/logr"
)

// probeDepth is how many probe frames (a little over 1 KiB each) stand for a
// request's handler chain: about 20 KiB, within stackReserve.
const probeDepth = 20

// probe uses about 1 KiB of stack per level.
//
//go:noinline
func probe(n int) byte {
	var buf [1024]byte
	buf[n] = byte(n)
	if n == 0 {
		return buf[0]
	}
	return probe(n-1) + buf[n]
}

// stackMoved runs probe and reports whether the stack was copied meanwhile
// (the address of a local changed).
//
//go:noinline
func stackMoved() bool {
	var local byte
	before := uintptr(unsafe.Pointer(&local))
	probe(probeDepth)
	return uintptr(unsafe.Pointer(&local)) != before
}

// TestPresizedStack checks that the server's handler gives an HTTP/2
// request's new goroutine its stack before the chain runs, so that running
// 20 KiB deep copies nothing, and that the probe sees a growth where no stack
// was given (HTTP/1.1 requests, served on their connection's grown goroutine).
func TestPresizedStack(t *testing.T) {
	var moved bool
	srv := NewHTTPServer(context.Background(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { moved = stackMoved() }),
		ServingOptions{Logger: logr.Discard()})
	for _, tc := range []struct {
		major int
		want  bool
	}{{2, false}, {1, true}} {
		r := httptest.NewRequest(http.MethodGet, "/api", nil)
		r.ProtoMajor = tc.major
		var wg sync.WaitGroup
		wg.Go(func() { srv.Handler.ServeHTTP(httptest.NewRecorder(), r) })
		wg.Wait()
		if moved != tc.want {
			t.Errorf("HTTP/%d: stack moved = %v, want %v", tc.major, moved, tc.want)
		}
	}
}

// BenchmarkGrowStack is what a new goroutine pays to run about 20 KiB deep,
// growing as it goes (none) or grown first (growStack).
func BenchmarkGrowStack(b *testing.B) {
	for _, bc := range []struct {
		name string
		grow func()
	}{{"none", func() {}}, {"grow", func() { growStack(false) }}, {"grow-zeroed", func() { growStack(true) }}} {
		b.Run(bc.name, func(b *testing.B) {
			var wg sync.WaitGroup
			for b.Loop() {
				wg.Go(func() {
					bc.grow()
					probe(probeDepth)
				})
				wg.Wait()
			}
		})
	}
}
