package clusterdns

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/miekg/dns"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

// Defaults of Options.
const (
	DefaultDomain     = "cluster.local"
	DefaultTTL        = 30
	DefaultService    = "kube-system/kube-dns"
	DefaultResolvConf = "/etc/resolv.conf"
)

// Options configure a Server. Client is required; the zero value of every
// other field means its default.
type Options struct {
	// Client reads Services and EndpointSlices. Its scheme must know core/v1
	// and discovery.k8s.io/v1 (builtin/api/all.NewScheme does).
	Client *client.Client
	// Domain is the cluster domain (default cluster.local).
	Domain string
	// TTL of every record, and of negative answers (default 30 s).
	TTL uint32
	// Service is the "namespace/name" of the Service whose cluster IPs and
	// UDP/TCP ports the server listens on (default kube-system/kube-dns).
	Service string
	// ExtraAddresses are more "ip:port" addresses to serve on, UDP and TCP
	// (tests use 127.0.0.1:PORT).
	ExtraAddresses []string
	// Upstreams are the "ip:port" servers names outside the cluster domain go
	// to; empty means the nameservers of ResolvConf.
	Upstreams []string
	// ResolvConf is the file the upstream servers come from (default
	// /etc/resolv.conf), re-read when it changes.
	ResolvConf string
	// ForwardTimeout bounds each upstream exchange (default 2 s).
	ForwardTimeout time.Duration
	// RetryInterval is how often addresses that could not be listened on are
	// retried (default 5 s).
	RetryInterval time.Duration
	// Logger receives the server's logs.
	Logger logr.Logger
}

// Server is the cluster DNS server of one machine. See the package
// documentation.
type Server struct {
	opts Options
	log  logr.Logger
	svcs *cache.Informer[*corev1.Service]
	eps  *cache.Informer[*discoveryv1.EndpointSlice]
	kick chan struct{}
	zone atomic.Pointer[zone]
	fwd  *forwarder

	mu        sync.Mutex
	listeners map[string]*listener // by "udp/ip:port" or "tcp/ip:port"; guarded by mu
	failed    map[string]bool      // addresses that could not be opened last time; guarded by mu
	serving   atomic.Pointer[[]string]
}

// New returns a Server; it does nothing until Start.
func New(opts Options) (*Server, error) {
	if opts.Client == nil {
		return nil, errors.New("clusterdns: Client is required")
	}
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	if _, ok := dns.IsDomainName(opts.Domain); !ok {
		return nil, fmt.Errorf("clusterdns: Domain %q is not a domain name", opts.Domain)
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Service == "" {
		opts.Service = DefaultService
	}
	if opts.ResolvConf == "" {
		opts.ResolvConf = DefaultResolvConf
	}
	if opts.ForwardTimeout <= 0 {
		opts.ForwardTimeout = 2 * time.Second
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 5 * time.Second
	}
	for _, a := range append(slices.Clone(opts.ExtraAddresses), opts.Upstreams...) {
		if _, err := netip.ParseAddrPort(a); err != nil {
			return nil, fmt.Errorf("clusterdns: address %q: want ip:port: %w", a, err)
		}
	}
	svcs, err := cache.NewClientInformer(opts.Client, cache.InformerOptions[*corev1.Service]{
		Transform: func(s *corev1.Service) *corev1.Service { s.ManagedFields = nil; return s },
	})
	if err != nil {
		return nil, fmt.Errorf("clusterdns: service informer: %w", err)
	}
	eps, err := cache.NewClientInformer(opts.Client, cache.InformerOptions[*discoveryv1.EndpointSlice]{
		Transform: func(s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice { s.ManagedFields = nil; return s },
	})
	if err != nil {
		return nil, fmt.Errorf("clusterdns: endpointslice informer: %w", err)
	}
	s := &Server{
		opts: opts, log: opts.Logger, svcs: svcs, eps: eps, kick: make(chan struct{}, 1),
		listeners: map[string]*listener{}, failed: map[string]bool{},
	}
	s.fwd = &forwarder{fixed: opts.Upstreams, resolvConf: opts.ResolvConf, timeout: opts.ForwardTimeout, self: s.isSelf}
	svcs.AddHandler(func(cache.Event[*corev1.Service]) { s.poke() })
	eps.AddHandler(func(cache.Event[*discoveryv1.EndpointSlice]) { s.poke() })
	return s, nil
}

func (s *Server) poke() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Start serves until ctx ends, then closes every listener and returns nil.
func (s *Server) Start(ctx context.Context) error {
	var informers sync.WaitGroup
	informers.Go(func() { _ = s.svcs.Start(ctx) })
	informers.Go(func() { _ = s.eps.Start(ctx) })
	defer func() {
		s.closeAll()
		informers.Wait()
	}()
	if !s.svcs.WaitForCacheSync(ctx) || !s.eps.WaitForCacheSync(ctx) {
		return nil // ctx ended
	}
	retry := time.NewTicker(s.opts.RetryInterval)
	defer retry.Stop()
	s.sync(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.kick:
			s.sync(ctx)
		case <-retry.C:
			s.mu.Lock()
			pending := len(s.failed) > 0
			s.mu.Unlock()
			if pending {
				s.sync(ctx)
			}
		}
	}
}

// Addresses returns what the server listens on ("udp/ip:port",
// "tcp/ip:port"), sorted.
func (s *Server) Addresses() []string {
	if p := s.serving.Load(); p != nil {
		return slices.Clone(*p)
	}
	return nil
}

// sync rebuilds the zone from the caches and makes the listeners match.
func (s *Server) sync(ctx context.Context) {
	s.zone.Store(buildZone(zoneInput{
		Domain: s.opts.Domain, TTL: s.opts.TTL, Serial: uint32(time.Now().Unix()), DNSService: s.opts.Service,
		Services: s.svcs.Store().List(), Slices: s.eps.Store().List(),
	}))
	want := s.wanted()
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, l := range s.listeners {
		if !want[key] {
			l.close()
			delete(s.listeners, key)
			s.log.V(1).Info("Stopped serving", "address", key)
		}
	}
	for key := range s.failed {
		if !want[key] {
			delete(s.failed, key)
		}
	}
	for key := range want {
		if _, ok := s.listeners[key]; ok {
			continue
		}
		l, err := s.listen(ctx, key)
		if err != nil {
			if !s.failed[key] {
				s.log.Error(err, "Cannot serve DNS; retrying", "address", key)
			}
			s.failed[key] = true
			continue
		}
		delete(s.failed, key)
		s.listeners[key] = l
		s.log.V(1).Info("Serving DNS", "address", key, "domain", s.opts.Domain)
	}
	keys := slices.Sorted(maps.Keys(s.listeners))
	s.serving.Store(&keys)
}

// wanted are the listen addresses: the DNS Service's cluster IPs on its UDP
// and TCP ports, and the extra addresses on both.
func (s *Server) wanted() map[string]bool {
	want := map[string]bool{}
	for _, a := range s.opts.ExtraAddresses {
		want["udp/"+a], want["tcp/"+a] = true, true
	}
	ns, name, _ := strings.Cut(s.opts.Service, "/")
	svc, ok := s.svcs.Store().Get(ns + "/" + name)
	if !ok || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return want
	}
	for _, ip := range serviceIPs(svc) {
		for _, p := range svc.Spec.Ports {
			addr := net.JoinHostPort(ip.String(), strconv.Itoa(int(p.Port)))
			switch p.Protocol {
			case corev1.ProtocolUDP:
				want["udp/"+addr] = true
			case corev1.ProtocolTCP, "":
				want["tcp/"+addr] = true
			}
		}
	}
	return want
}

// isSelf reports whether addr is one the server listens on.
func (s *Server) isSelf(addr string) bool {
	for _, k := range s.Addresses() {
		if strings.HasSuffix(k, "/"+addr) {
			return true
		}
	}
	return false
}

func (s *Server) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, l := range s.listeners {
		l.close()
		delete(s.listeners, key)
	}
	s.serving.Store(nil)
}

// listener is one dns.Server on one socket.
type listener struct {
	srv     *dns.Server
	started chan struct{}
	done    chan struct{}
}

// listen opens key ("udp/ip:port" or "tcp/ip:port") and serves on it.
func (s *Server) listen(ctx context.Context, key string) (*listener, error) {
	network, addr, _ := strings.Cut(key, "/")
	srv := &dns.Server{Handler: dns.HandlerFunc(s.serveDNS), ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	lc := net.ListenConfig{}
	if network == "udp" {
		pc, err := lc.ListenPacket(ctx, "udp", addr)
		if err != nil {
			return nil, err
		}
		srv.PacketConn = pc
	} else {
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		srv.Listener = ln
	}
	l := &listener{srv: srv, started: make(chan struct{}), done: make(chan struct{})}
	srv.NotifyStartedFunc = func() { close(l.started) }
	go func() {
		defer close(l.done)
		if err := srv.ActivateAndServe(); err != nil {
			s.log.V(1).Info("DNS listener stopped", "address", key, "error", err.Error())
		}
	}()
	return l, nil
}

func (l *listener) close() {
	select {
	case <-l.started:
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = l.srv.ShutdownContext(ctx)
		cancel()
	case <-l.done:
	}
	if l.srv.PacketConn != nil {
		_ = l.srv.PacketConn.Close()
	}
	if l.srv.Listener != nil {
		_ = l.srv.Listener.Close()
	}
	<-l.done
}

// serveDNS answers one query.
func (s *Server) serveDNS(w dns.ResponseWriter, req *dns.Msg) {
	resp := s.answer(req)
	size := dns.MaxMsgSize
	if _, udp := w.LocalAddr().(*net.UDPAddr); udp {
		size = dns.MinMsgSize
		if opt := req.IsEdns0(); opt != nil {
			size = max(size, int(opt.UDPSize()))
		}
	}
	resp.Truncate(size)
	if err := w.WriteMsg(resp); err != nil {
		s.log.V(1).Info("Cannot write DNS answer", "to", w.RemoteAddr().String(), "error", err.Error())
	}
}

// answer builds the response to req from the zone or the upstream servers.
func (s *Server) answer(req *dns.Msg) *dns.Msg {
	m := new(dns.Msg)
	if req.Opcode != dns.OpcodeQuery || len(req.Question) != 1 {
		m.SetRcode(req, dns.RcodeNotImplemented)
		if len(req.Question) != 1 {
			m.SetRcode(req, dns.RcodeFormatError)
		}
		return m
	}
	q := req.Question[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*s.opts.ForwardTimeout)
	defer cancel()
	z := s.zone.Load()
	if z == nil {
		return m.SetRcode(req, dns.RcodeServerFailure) // caches not synced yet
	}
	res := z.lookup(q)
	if res.Forward {
		resp, err := s.fwd.exchange(ctx, req)
		if err != nil {
			s.log.V(1).Info("Forwarding failed", "name", q.Name, "type", dns.TypeToString[q.Qtype], "error", err.Error())
			m.SetRcode(req, dns.RcodeServerFailure)
			m.RecursionAvailable = true
			return m
		}
		resp.Compress = true
		s.edns(req, resp)
		return resp
	}
	m.SetRcode(req, res.Rcode)
	m.Authoritative, m.RecursionAvailable, m.Compress = res.Authoritative, true, true
	m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
	if res.Chase != "" && req.RecursionDesired {
		cq := new(dns.Msg)
		cq.SetQuestion(res.Chase, q.Qtype)
		if resp, err := s.fwd.exchange(ctx, cq); err == nil {
			m.Answer = append(m.Answer, resp.Answer...)
		}
	}
	s.edns(req, m)
	return m
}

// edns gives resp an OPT record when req had one (and only then).
func (s *Server) edns(req, resp *dns.Msg) {
	resp.Extra = slices.DeleteFunc(resp.Extra, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeOPT })
	if opt := req.IsEdns0(); opt != nil {
		resp.SetEdns0(max(dns.MinMsgSize, min(opt.UDPSize(), dns.DefaultMsgSize)), false)
	}
}
