package etcd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/logutil"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Defaults for EmbeddedOptions.
const (
	// DefaultQuotaBackendBytes is the backend size at which etcd raises its
	// NOSPACE alarm and turns read-only.
	DefaultQuotaBackendBytes = 8 << 30
	// DefaultStartTimeout bounds the wait for the server to become ready.
	DefaultStartTimeout = 60 * time.Second
	// DefaultMemberName names the single member.
	DefaultMemberName = "converge"
	// DefaultLogLevel keeps etcd's own zap logging to errors.
	DefaultLogLevel = "error"
	// DefaultCatchUpEntries is how many applied raft entries a single member
	// keeps in memory after each snapshot (etcd's snapshot-catchup-entries).
	// They are there for a slow follower to catch up from; a single member
	// has none, and a member that joins later is sent a snapshot. etcd's
	// default, 5,000 (EtcdCatchUpEntries), held ≈11 MB with 10,000 pods.
	DefaultCatchUpEntries = 100
	// EtcdCatchUpEntries is etcd's own default snapshot-catchup-entries.
	EtcdCatchUpEntries = 5000
)

// Raft timing of a single-member server (etcd's defaults are 100 ms and 1 s).
const (
	singleMemberTickMs     = 10
	singleMemberElectionMs = 100
)

// EmbeddedOptions configure StartEmbedded. The zero value of every field but Dir
// means its default.
type EmbeddedOptions struct {
	// Dir is the etcd data directory (required). An existing one is reopened
	// with its data.
	Dir string
	// NoFsync disables fsync (etcd's UnsafeNoFsync): fast, loses data on a
	// machine crash. For tests only.
	NoFsync bool
	// ClientPort is the 127.0.0.1 port clients connect to; 0 picks a free one.
	ClientPort int
	// PeerPort is the 127.0.0.1 raft peer port; 0 picks a free one.
	PeerPort int
	// Name is the member name; DefaultMemberName when empty.
	Name string
	// QuotaBackendBytes is the backend quota; DefaultQuotaBackendBytes when 0.
	QuotaBackendBytes int64
	// LogLevel is etcd's zap level (debug, info, warn, error); DefaultLogLevel
	// when empty. etcd logs to stderr.
	LogLevel string
	// StartTimeout bounds the wait for readiness; DefaultStartTimeout when 0.
	StartTimeout time.Duration
	// CatchUpEntries is the number of raft entries kept in memory after a
	// snapshot; DefaultCatchUpEntries when 0. Only memory: every entry is in
	// the WAL (fsynced unless NoFsync) before it is applied, and disk
	// snapshots stay at etcd's default (every 10,000 entries).
	CatchUpEntries uint64
}

func (o EmbeddedOptions) complete() EmbeddedOptions {
	if o.Name == "" {
		o.Name = DefaultMemberName
	}
	if o.QuotaBackendBytes == 0 {
		o.QuotaBackendBytes = DefaultQuotaBackendBytes
	}
	if o.LogLevel == "" {
		o.LogLevel = DefaultLogLevel
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.CatchUpEntries == 0 {
		o.CatchUpEntries = DefaultCatchUpEntries
	}
	return o
}

func (o EmbeddedOptions) validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("dir is required"))
	}
	for name, p := range map[string]int{"client port": o.ClientPort, "peer port": o.PeerPort} {
		if p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s %d out of range", name, p))
		}
	}
	if o.QuotaBackendBytes < 0 {
		errs = append(errs, fmt.Errorf("quota backend bytes %d is negative", o.QuotaBackendBytes))
	}
	if _, err := zapcore.ParseLevel(o.LogLevel); err != nil {
		errs = append(errs, fmt.Errorf("log level: %w", err))
	}
	if o.StartTimeout < 0 {
		errs = append(errs, fmt.Errorf("start timeout %s is negative", o.StartTimeout))
	}
	return errors.Join(errs...)
}

// Embedded is a running etcd server (a single-member one from StartEmbedded, or
// one member of a cluster from StartMember) plus a client connected to it.
type Embedded struct {
	etcd      *embed.Etcd
	client    *clientv3.Client // over gRPC on the client URL
	local     *clientv3.Client // in-process: direct calls into the server
	localKV   pb.KVServer      // the server's KV service, for NewLocal
	watches   *localWatches    // NewLocal's watches on the server's store
	endpoints []string
	name      string
	peerURL   string
	// closing silences etcd's logging of its own shutdown ("mux: server
	// closed", "use of closed network connection") once Close starts.
	closing *atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// StartEmbedded starts an etcd server in opts.Dir listening on 127.0.0.1, waits
// until it serves (or ctx ends, or opts.StartTimeout passes) and connects a
// client to it. Automatic compaction is off: run RunCompactor. The caller must
// Close the handle.
func StartEmbedded(ctx context.Context, opts EmbeddedOptions) (*Embedded, error) {
	opts = opts.complete()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("start embedded etcd: invalid options: %w", err)
	}
	// Ports we pick can be taken by someone else before etcd binds them: retry.
	const attempts = 3
	var lastErr error
	for range attempts {
		e, err := startOnce(ctx, opts)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if !isAddrInUse(err) || (opts.ClientPort != 0 && opts.PeerPort != 0) {
			break
		}
	}
	return nil, fmt.Errorf("start embedded etcd in %s: %w", opts.Dir, lastErr)
}

func startOnce(ctx context.Context, opts EmbeddedOptions) (*Embedded, error) {
	clientPort, peerPort := opts.ClientPort, opts.PeerPort
	var err error
	if clientPort == 0 {
		if clientPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	if peerPort == 0 {
		if peerPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}

	cfg := embed.NewConfig()
	cfg.Name = opts.Name
	cfg.Dir = opts.Dir
	cfg.UnsafeNoFsync = opts.NoFsync
	cfg.QuotaBackendBytes = opts.QuotaBackendBytes
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = "0" // off: RunCompactor compacts
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.InitialClusterToken = "converge-" + opts.Name
	// A single member has no peers to lose heartbeats to, so a short tick
	// cannot cause spurious elections; it makes the member elect itself in
	// tens of milliseconds instead of etcd's default of up to a second.
	cfg.TickMs = singleMemberTickMs
	cfg.ElectionMs = singleMemberElectionMs
	cfg.SnapshotCatchUpEntries = opts.CatchUpEntries
	// embed.NewConfig leaves this at 0 (only etcd's command line applies the
	// 300 ms default), which makes etcd treat every unary request as expensive
	// and render it as text for a warning on every call, e.g. each create's Txn.
	cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	closing := new(atomic.Bool)
	lg, err := serverLogger(opts.LogLevel, closing)
	if err != nil {
		return nil, err
	}
	cfg.Logger = "zap"
	cfg.LogLevel = opts.LogLevel
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)

	etcd, err := startAndWait(ctx, cfg, opts.StartTimeout, closing)
	if err != nil {
		return nil, err
	}

	endpoints := []string{clientURL.String()}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      quietClientLogger(),
	})
	if err != nil {
		closing.Store(true)
		etcd.Close()
		return nil, fmt.Errorf("connect client to %s: %w", clientURL.String(), err)
	}
	return newEmbedded(etcd, client, endpoints, closing, opts.Name, peerURL.String()), nil
}

// newEmbedded is the handle of a started server and its client over gRPC,
// with the in-process services NewLocal uses.
func newEmbedded(etcd *embed.Etcd, client *clientv3.Client, endpoints []string, closing *atomic.Bool, name, peerURL string) *Embedded {
	srv := etcd.Server
	return &Embedded{
		etcd: etcd, client: client, local: v3client.New(srv), localKV: v3rpc.NewQuotaKVServer(srv),
		watches:   newLocalWatches(srv.Watchable(), func() bool { return len(srv.Cluster().Members()) == 1 }),
		endpoints: endpoints, closing: closing, name: name, peerURL: peerURL,
	}
}

// Client returns the client connected to the server over gRPC; Close closes it.
func (e *Embedded) Client() *clientv3.Client { return e.client }

// LocalClient returns a client whose KV, watch and lease calls go straight to
// the server's services in this process (etcd's v3client): no gRPC encoding
// and no sockets. It is the storage's client when the API server and etcd
// share a process, where it takes about a third off the CPU time of each API
// create (docs/PERFORMANCE.md). It has no endpoints, and its
// Maintenance cannot stream snapshots: use Client for those. Close closes it.
func (e *Embedded) LocalClient() *clientv3.Client { return e.local }

// Endpoints returns the client URLs of the server.
func (e *Embedded) Endpoints() []string { return append([]string(nil), e.endpoints...) }

// Err reports fatal server errors after start.
func (e *Embedded) Err() <-chan error { return e.etcd.Err() }

// Close closes the client and stops the server, waiting for it to finish. It is
// safe to call more than once; later calls return the first result.
func (e *Embedded) Close() error {
	e.closeOnce.Do(func() {
		_ = e.local.Close() // cancels its context, which is all there is to close
		e.watches.close()
		if err := e.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
			e.closeErr = fmt.Errorf("close etcd client: %w", err)
		}
		e.closing.Store(true)
		e.etcd.Close()
	})
	return e.closeErr
}

// freePort asks the kernel for a free 127.0.0.1 TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func isAddrInUse(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}

// quietClientLogger is the zap logger given to clientv3: errors only, so that
// reconnect chatter stays out of the caller's output.
func quietClientLogger() *zap.Logger {
	lg, err := logutil.CreateDefaultZapLogger(zapcore.ErrorLevel)
	if err != nil {
		return nil // clientv3 builds its own
	}
	return lg
}

// serverLogger is etcd's zap logger: JSON to stderr at level, and nothing below
// panic level once closing is set.
func serverLogger(level string, closing *atomic.Bool) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("etcd log level: %w", err)
	}
	lg, err := logutil.CreateDefaultZapLogger(lvl)
	if err != nil {
		return nil, fmt.Errorf("build etcd logger: %w", err)
	}
	return lg.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core {
		return closingCore{Core: c, closing: closing}
	})), nil
}

// closingCore drops entries below panic level once closing is set, and the
// one error etcd logs by design on a fast start: its storage-version monitor
// runs as soon as the cluster version is set, before the first term reaches
// the backend, fails with "missing term information" and succeeds on its next
// round.
type closingCore struct {
	zapcore.Core
	closing *atomic.Bool
}

func (c closingCore) With(fields []zapcore.Field) zapcore.Core {
	return closingCore{Core: c.Core.With(fields), closing: c.closing}
}

func (c closingCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.closing.Load() && ent.Level < zapcore.DPanicLevel {
		return ce
	}
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c closingCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	if isBenignStartupError(ent, fields) {
		return nil
	}
	return c.Core.Write(ent, fields)
}

func isBenignStartupError(ent zapcore.Entry, fields []zapcore.Field) bool {
	if ent.Message != "failed to update storage version" {
		return false
	}
	for _, f := range fields {
		if err, ok := f.Interface.(error); ok && f.Type == zapcore.ErrorType && strings.Contains(err.Error(), "missing term information") {
			return true
		}
	}
	return false
}
