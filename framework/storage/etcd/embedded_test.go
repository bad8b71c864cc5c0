package etcd

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/converge-dev/converge/framework/storage"
)

func TestEmbeddedStartRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	e, err := StartEmbedded(t.Context(), EmbeddedOptions{Dir: dir, NoFsync: true})
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	ready := time.Since(start)
	t.Logf("start to ready: %s (endpoints %v)", ready, e.Endpoints())
	if ready > 10*time.Second {
		t.Errorf("start to ready took %s, want well under a second", ready)
	}
	if len(e.Endpoints()) != 1 || !strings.HasPrefix(e.Endpoints()[0], "http://127.0.0.1:") {
		t.Fatalf("endpoints %v", e.Endpoints())
	}
	rev, err := New(e.Client()).Create(t.Context(), "/persist/a", []byte("v"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	// Reopen the same directory, on other ports: the data is still there.
	start = time.Now()
	e2, err := StartEmbedded(t.Context(), EmbeddedOptions{Dir: dir, NoFsync: true})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	t.Logf("restart to ready: %s", time.Since(start))
	defer e2.Close()
	kv, err := New(e2.Client()).Get(t.Context(), "/persist/a")
	if err != nil || string(kv.Value) != "v" || kv.ModRevision != rev {
		t.Fatalf("after restart Get = %+v, %v", kv, err)
	}
	select {
	case err := <-e2.Err():
		t.Fatalf("server error: %v", err)
	default:
	}
}

func TestEmbeddedFixedPortsInUse(t *testing.T) {
	t.Parallel()
	e := startTestServer(t)
	u, err := url.Parse(e.Endpoints()[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	_, err = StartEmbedded(t.Context(), EmbeddedOptions{Dir: t.TempDir(), NoFsync: true, ClientPort: p, StartTimeout: 10 * time.Second})
	if err == nil {
		t.Fatal("StartEmbedded on a taken client port succeeded")
	}
	t.Logf("taken port: %v", err)
}

func TestEmbeddedOptionsInvalid(t *testing.T) {
	t.Parallel()
	_, err := StartEmbedded(t.Context(), EmbeddedOptions{ClientPort: -1, LogLevel: "loud"})
	if err == nil {
		t.Fatal("invalid options accepted")
	}
	for _, want := range []string{"dir is required", "client port -1", "log level"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestEmbeddedCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := StartEmbedded(ctx, EmbeddedOptions{Dir: t.TempDir(), NoFsync: true}); !errors.Is(err, context.Canceled) {
		t.Fatalf("StartEmbedded with a cancelled context: %v", err)
	}
}

func TestConnect(t *testing.T) {
	t.Parallel()
	c, err := Connect(t.Context(), ExternalOptions{Endpoints: shared.Endpoints()})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	if _, err := New(c).CurrentRevision(t.Context()); err != nil {
		t.Fatalf("CurrentRevision through Connect: %v", err)
	}
	var _ storage.Interface = New(c)
}

func TestConnectUnreachable(t *testing.T) {
	t.Parallel()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ep := "http://127.0.0.1:" + strconv.Itoa(port)
	start := time.Now()
	_, err = Connect(t.Context(), ExternalOptions{Endpoints: []string{ep}, DialTimeout: 500 * time.Millisecond})
	if err == nil {
		t.Fatal("Connect to a closed port succeeded")
	}
	if !strings.Contains(err.Error(), ep) {
		t.Fatalf("error %q does not name the endpoint", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Connect took %s to fail", d)
	}
}

func TestConnectOptionsInvalid(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		opts ExternalOptions
		want string
	}{
		{"no endpoints", ExternalOptions{}, "no endpoints"},
		{"cert without key", ExternalOptions{Endpoints: []string{"https://x:2379"}, CertFile: "c.pem"}, "together"},
		{"missing CA", ExternalOptions{Endpoints: []string{"https://x:2379"}, CAFile: "/nonexistent/ca.pem"}, "read CA file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Connect(t.Context(), c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Connect error %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func TestStartEmbeddedIsFast(t *testing.T) {
	// A single member elects itself within a few ticks; with etcd's default
	// one-second election timeout this took 0.5–1 s.
	start := time.Now()
	e, err := StartEmbedded(t.Context(), EmbeddedOptions{Dir: t.TempDir(), NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if took > 400*time.Millisecond {
		t.Errorf("StartEmbedded took %s, want < 400ms", took)
	}
}

func TestBenignStartupErrorFilter(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		err  error
		drop bool
	}{
		{"failed to update storage version", errors.New("cannot detect storage schema version: missing term information"), true},
		{"failed to update storage version", errors.New("disk full"), false},
		{"something else", errors.New("missing term information"), false},
	} {
		got := isBenignStartupError(zapcore.Entry{Message: tc.msg}, []zapcore.Field{zap.Error(tc.err)})
		if got != tc.drop {
			t.Errorf("%q / %v: dropped=%v, want %v", tc.msg, tc.err, got, tc.drop)
		}
	}
}
