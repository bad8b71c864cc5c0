package etcd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"
)

// Values of MemberOptions.InitialClusterState.
const (
	// ClusterStateNew bootstraps a new cluster together with the other members
	// listed in InitialCluster.
	ClusterStateNew = embed.ClusterStateFlagNew
	// ClusterStateExisting joins a running cluster that already has this member
	// in its member list (added with `etcdctl member add` or Client.MemberAdd).
	ClusterStateExisting = embed.ClusterStateFlagExisting
)

// DefaultClusterToken is the initial cluster token when MemberOptions gives none.
const DefaultClusterToken = "converge-etcd"

// MemberOptions configure StartMember: one member of a (usually 3- or 5-member)
// etcd cluster. Name, Dir, ClientURL and PeerURL are required; the zero value of
// every other field means its default.
//
// Only the first start of a member reads InitialCluster, InitialClusterState
// and InitialClusterToken: a member whose Dir already holds data takes its
// membership from there.
type MemberOptions struct {
	// Name is the member's name, unique in the cluster.
	Name string
	// Dir is the data directory; an existing one is reopened with its data.
	Dir string
	// ClientURL is where clients connect (http://host:port, https:// with
	// ClientCertFile); it is both listened on and advertised.
	ClientURL string
	// PeerURL is where the other members connect (http://host:port, https://
	// with PeerCertFile); it is both listened on and advertised.
	PeerURL string
	// InitialCluster lists every member of the cluster being bootstrapped or
	// joined as name=peerURL pairs separated by commas; Name=PeerURL (a
	// single-member cluster) when empty.
	InitialCluster string
	// InitialClusterState is ClusterStateNew (default) or ClusterStateExisting.
	InitialClusterState string
	// InitialClusterToken keeps clusters bootstrapped from the same
	// InitialCluster apart; DefaultClusterToken when empty.
	InitialClusterToken string
	// NoFsync disables fsync (etcd's UnsafeNoFsync): fast, loses data on a
	// machine crash. For tests only.
	NoFsync bool
	// QuotaBackendBytes is the backend quota; DefaultQuotaBackendBytes when 0.
	QuotaBackendBytes int64
	// LogLevel is etcd's zap level; DefaultLogLevel when empty.
	LogLevel string
	// StartTimeout bounds the wait for readiness (which, for a new cluster,
	// needs a quorum of members up); DefaultStartTimeout when 0.
	StartTimeout time.Duration
	// HeartbeatInterval and ElectionTimeout tune raft (etcd defaults 100 ms and
	// 1 s when 0).
	HeartbeatInterval, ElectionTimeout time.Duration

	// ClientCertFile and ClientKeyFile are the server certificate and key
	// served on ClientURL (both or neither; ClientURL must then be https).
	ClientCertFile, ClientKeyFile string
	// ClientCAFile, when set, makes the member require client certificates
	// signed by it.
	ClientCAFile string
	// PeerCertFile and PeerKeyFile secure the peer URL (both or neither; PeerURL
	// must then be https); the certificate is also the member's client
	// certificate towards its peers.
	PeerCertFile, PeerKeyFile string
	// PeerCAFile verifies the other members' certificates and makes peer
	// client-certificate authentication mandatory.
	PeerCAFile string
}

func (o MemberOptions) complete() MemberOptions {
	if o.InitialCluster == "" && o.Name != "" && o.PeerURL != "" {
		o.InitialCluster = o.Name + "=" + o.PeerURL
	}
	if o.InitialClusterState == "" {
		o.InitialClusterState = ClusterStateNew
	}
	if o.InitialClusterToken == "" {
		o.InitialClusterToken = DefaultClusterToken
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
	return o
}

func (o MemberOptions) validate() error {
	var errs []error
	if o.Name == "" {
		errs = append(errs, errors.New("name is required"))
	}
	if o.Dir == "" {
		errs = append(errs, errors.New("dir is required"))
	}
	if err := checkURL("client URL", o.ClientURL, o.ClientCertFile != ""); err != nil {
		errs = append(errs, err)
	}
	if err := checkURL("peer URL", o.PeerURL, o.PeerCertFile != ""); err != nil {
		errs = append(errs, err)
	}
	if (o.ClientCertFile == "") != (o.ClientKeyFile == "") {
		errs = append(errs, errors.New("client cert file and key file must be given together"))
	}
	if (o.PeerCertFile == "") != (o.PeerKeyFile == "") {
		errs = append(errs, errors.New("peer cert file and key file must be given together"))
	}
	if o.ClientCAFile != "" && o.ClientCertFile == "" {
		errs = append(errs, errors.New("client CA file needs a client cert file (TLS on the client URL)"))
	}
	if o.PeerCAFile != "" && o.PeerCertFile == "" {
		errs = append(errs, errors.New("peer CA file needs a peer cert file (TLS on the peer URL)"))
	}
	if o.InitialClusterState != ClusterStateNew && o.InitialClusterState != ClusterStateExisting {
		errs = append(errs, fmt.Errorf("initial cluster state %q: want %q or %q", o.InitialClusterState, ClusterStateNew, ClusterStateExisting))
	}
	if o.Name != "" && o.PeerURL != "" {
		if err := checkInitialCluster(o.InitialCluster, o.Name, o.PeerURL); err != nil {
			errs = append(errs, err)
		}
	}
	if o.QuotaBackendBytes < 0 {
		errs = append(errs, fmt.Errorf("quota backend bytes %d is negative", o.QuotaBackendBytes))
	}
	if _, err := zapcore.ParseLevel(o.LogLevel); err != nil {
		errs = append(errs, fmt.Errorf("log level: %w", err))
	}
	if o.StartTimeout < 0 || o.HeartbeatInterval < 0 || o.ElectionTimeout < 0 {
		errs = append(errs, errors.New("start timeout, heartbeat interval and election timeout must not be negative"))
	}
	return errors.Join(errs...)
}

// checkURL checks that s is an http(s)://host:port URL with an explicit port,
// https when tls is set.
func checkURL(what, s string, tls bool) error {
	if s == "" {
		return fmt.Errorf("%s is required", what)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s %q: %w", what, s, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s %q: scheme must be http or https", what, s)
	case u.Port() == "" || u.Port() == "0":
		return fmt.Errorf("%s %q: needs an explicit port", what, s)
	case u.Path != "" && u.Path != "/":
		return fmt.Errorf("%s %q: must not have a path", what, s)
	case tls && u.Scheme != "https":
		return fmt.Errorf("%s %q: must be https when a certificate is given", what, s)
	case !tls && u.Scheme == "https":
		return fmt.Errorf("%s %q: https needs a certificate and key", what, s)
	}
	return nil
}

// checkInitialCluster checks the name=peerURL list and that it names this member
// with its peer URL.
func checkInitialCluster(list, name, peerURL string) error {
	found := false
	seen := map[string]bool{}
	for pair := range strings.SplitSeq(list, ",") {
		n, u, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || n == "" || u == "" {
			return fmt.Errorf("initial cluster %q: %q is not name=peerURL", list, pair)
		}
		if seen[n+"="+u] {
			return fmt.Errorf("initial cluster %q: %q is listed twice", list, pair)
		}
		seen[n+"="+u] = true
		if err := checkURL("initial cluster peer URL", u, strings.HasPrefix(u, "https:")); err != nil {
			return err
		}
		if n == name && strings.TrimSuffix(u, "/") == strings.TrimSuffix(peerURL, "/") {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("initial cluster %q does not list this member as %s=%s", list, name, peerURL)
	}
	return nil
}

// StartMember starts one member of an etcd cluster, waits until it serves (or
// ctx ends, or opts.StartTimeout passes) and connects a client to its own client
// URL. The members of a new cluster must be started concurrently: each becomes
// ready only once a quorum of them is up and has elected a leader. Automatic
// compaction is off: API servers run RunCompactor. The caller must Close the
// handle.
func StartMember(ctx context.Context, opts MemberOptions) (*Embedded, error) {
	opts = opts.complete()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("start etcd member %s: invalid options: %w", opts.Name, err)
	}
	clientURL, _ := url.Parse(opts.ClientURL)
	peerURL, _ := url.Parse(opts.PeerURL)

	cfg := embed.NewConfig()
	cfg.Name = opts.Name
	cfg.Dir = opts.Dir
	cfg.UnsafeNoFsync = opts.NoFsync
	cfg.QuotaBackendBytes = opts.QuotaBackendBytes
	cfg.AutoCompactionMode = embed.CompactorModePeriodic
	cfg.AutoCompactionRetention = "0"
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = opts.InitialCluster
	cfg.ClusterState = opts.InitialClusterState
	cfg.InitialClusterToken = opts.InitialClusterToken
	// embed.NewConfig leaves this at 0 (only etcd's command line applies the
	// 300 ms default), which makes etcd treat every unary request as expensive
	// and render it as text for a warning on every call, e.g. each create's Txn.
	cfg.WarningUnaryRequestDuration = embed.DefaultWarningUnaryRequestDuration
	if opts.HeartbeatInterval > 0 {
		cfg.TickMs = uint(opts.HeartbeatInterval / time.Millisecond)
	}
	if opts.ElectionTimeout > 0 {
		cfg.ElectionMs = uint(opts.ElectionTimeout / time.Millisecond)
	}
	cfg.ClientTLSInfo = transport.TLSInfo{
		CertFile: opts.ClientCertFile, KeyFile: opts.ClientKeyFile,
		TrustedCAFile: opts.ClientCAFile, ClientCertAuth: opts.ClientCAFile != "",
	}
	cfg.PeerTLSInfo = transport.TLSInfo{
		CertFile: opts.PeerCertFile, KeyFile: opts.PeerKeyFile,
		TrustedCAFile: opts.PeerCAFile, ClientCertAuth: opts.PeerCAFile != "",
	}
	closing := new(atomic.Bool)
	lg, err := serverLogger(opts.LogLevel, closing)
	if err != nil {
		return nil, fmt.Errorf("start etcd member %s: %w", opts.Name, err)
	}
	cfg.Logger = "zap"
	cfg.LogLevel = opts.LogLevel
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(lg)

	etcd, err := startAndWait(ctx, cfg, opts.StartTimeout, closing)
	if err != nil {
		return nil, fmt.Errorf("start etcd member %s in %s: %w", opts.Name, opts.Dir, err)
	}
	tlsCfg, err := tlsConfig(ExternalOptions{CAFile: opts.ClientCAFile, CertFile: opts.ClientCertFile, KeyFile: opts.ClientKeyFile})
	if err == nil && tlsCfg != nil && opts.ClientCAFile == "" {
		tlsCfg.Certificates = nil // server-only TLS: the system roots verify it
	}
	var client *clientv3.Client
	if err == nil {
		client, err = clientv3.New(clientv3.Config{
			Endpoints:   []string{opts.ClientURL},
			DialTimeout: 5 * time.Second,
			TLS:         tlsCfg,
			Logger:      quietClientLogger(),
		})
	}
	if err != nil {
		closing.Store(true)
		etcd.Close()
		return nil, fmt.Errorf("start etcd member %s: connect client to %s: %w", opts.Name, opts.ClientURL, err)
	}
	return newEmbedded(etcd, client, []string{opts.ClientURL}, closing, opts.Name, opts.PeerURL), nil
}

// startAndWait starts etcd with cfg and waits for it to serve.
func startAndWait(ctx context.Context, cfg *embed.Config, timeout time.Duration, closing *atomic.Bool) (*embed.Etcd, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-etcd.Server.ReadyNotify():
		// select picks at random among ready cases: a context cancelled
		// while etcd became ready still wins.
		if err := ctx.Err(); err != nil {
			closing.Store(true)
			etcd.Server.Stop()
			etcd.Close()
			return nil, fmt.Errorf("wait for readiness: %w", err)
		}
		return etcd, nil
	case err := <-etcd.Err():
		closing.Store(true)
		etcd.Close()
		return nil, fmt.Errorf("wait for readiness: %w", err)
	case <-ctx.Done():
		closing.Store(true)
		etcd.Server.Stop()
		etcd.Close()
		return nil, fmt.Errorf("wait for readiness: %w", ctx.Err())
	case <-timer.C:
		closing.Store(true)
		etcd.Server.Stop()
		etcd.Close()
		return nil, fmt.Errorf("not ready after %s", timeout)
	}
}

// RunMember runs a member until ctx ends or the server fails: StartMember, then
// ready (if not nil) is called with the handle, then it blocks. It closes the
// member before returning; the error is nil after a clean stop by ctx. This is
// the body of `converge etcd`.
func RunMember(ctx context.Context, opts MemberOptions, ready func(*Embedded)) error {
	m, err := StartMember(ctx, opts)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(m)
	}
	var runErr error
	select {
	case <-ctx.Done():
	case err, ok := <-m.Err():
		if ok && err != nil {
			runErr = fmt.Errorf("etcd member %s: %w", opts.Name, err)
		}
	}
	return errors.Join(runErr, m.Close())
}

// Name is the member's name.
func (e *Embedded) Name() string { return e.name }

// PeerURL is the member's advertised peer URL.
func (e *Embedded) PeerURL() string { return e.peerURL }

// IsLeader reports whether this member is the raft leader right now.
func (e *Embedded) IsLeader() bool {
	return e.etcd.Server.MemberID() == e.etcd.Server.Leader()
}
