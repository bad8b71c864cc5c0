package etcd

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// shared is the embedded server the tests of this binary share; each test uses
// its own key prefix. Tests that compact or need a clean cluster start their own.
var shared *Embedded

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "converge-etcd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "create temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	shared, err = StartEmbedded(ctx, EmbeddedOptions{Dir: dir, NoFsync: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start shared etcd:", err)
		return 1
	}
	code := m.Run()
	if err := shared.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close shared etcd:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(leakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	return code
}

// leakOptions ignores goroutines that etcd and its dependencies keep for the
// life of the process, whoever started them.
func leakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/golang/glog.(*fileSink).flushDaemon"),
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		goleak.IgnoreAnyFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
		// Multi-member tests: a member's peer round tripper (etcdserver's
		// bootstrap peerRt, used for version checks) is never closed, so
		// kept-alive peer connections between members of one process outlive
		// them, on both ends. This package's own code speaks no HTTP.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*connReader).backgroundRead"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
	}
}
