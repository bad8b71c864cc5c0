package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

// Options configure a Proxy. Client is required; the zero value of every other
// field means its default.
type Options struct {
	// Client reads Services and EndpointSlices. Its scheme must know core/v1
	// and discovery.k8s.io/v1 (builtin/api/all.NewScheme does).
	Client *client.Client
	// NodePortAddresses are the addresses node ports listen on (default
	// 0.0.0.0, which includes 127.0.0.1).
	NodePortAddresses []string
	// DialTimeout bounds each connection attempt to a backend (default 2 s).
	DialTimeout time.Duration
	// Interface is the dummy interface the proxy creates and owns to hold
	// cluster IPs outside 127.0.0.0/8, one /32 each, so it can listen on them
	// and pods in their own network namespaces reach them through their
	// gateway (default DefaultInterface, "converge0"). It is removed when Start
	// returns. Needs CAP_NET_ADMIN.
	Interface string
	// RetryInterval is how often listeners that could not be opened are
	// retried (default 5 s).
	RetryInterval time.Duration
	// Logger receives the proxy's logs.
	Logger logr.Logger
}

// Proxy forwards connections to Service addresses to their endpoints. See the
// package documentation.
type Proxy struct {
	opts Options
	log  logr.Logger
	svcs *cache.Informer[*corev1.Service]
	eps  *cache.Informer[*discoveryv1.EndpointSlice]
	kick chan struct{}

	mu        sync.Mutex
	listeners map[string]*listener    // by listen address; guarded by mu
	failed    map[string]bool         // addresses that could not be opened last time; guarded by mu
	ifaceErr  bool                    // the interface could not be synced last time; guarded by mu
	ifaceUsed bool                    // the interface was created or synced; guarded by mu
	ifaceOwn  map[netip.Addr]bool     // the addresses this proxy holds on the interface; guarded by mu
	sticky    map[string]*stickyTable // client IP affinity by Service port; guarded by mu

	wg sync.WaitGroup // accept loops and proxied connections
}

// New returns a Proxy; it does nothing until Start.
func New(opts Options) (*Proxy, error) {
	if opts.Client == nil {
		return nil, errors.New("proxy: Client is required")
	}
	if len(opts.NodePortAddresses) == 0 {
		opts.NodePortAddresses = []string{"0.0.0.0"}
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 2 * time.Second
	}
	if opts.Interface == "" {
		opts.Interface = DefaultInterface
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 5 * time.Second
	}
	svcs, err := cache.NewClientInformer(opts.Client, cache.InformerOptions[*corev1.Service]{
		Transform: func(s *corev1.Service) *corev1.Service { s.ManagedFields = nil; return s },
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: service informer: %w", err)
	}
	eps, err := cache.NewClientInformer(opts.Client, cache.InformerOptions[*discoveryv1.EndpointSlice]{
		Transform: func(s *discoveryv1.EndpointSlice) *discoveryv1.EndpointSlice { s.ManagedFields = nil; return s },
	})
	if err != nil {
		return nil, fmt.Errorf("proxy: endpointslice informer: %w", err)
	}
	p := &Proxy{
		opts: opts, log: opts.Logger, svcs: svcs, eps: eps, kick: make(chan struct{}, 1),
		listeners: map[string]*listener{}, failed: map[string]bool{}, ifaceOwn: map[netip.Addr]bool{},
	}
	svcs.AddHandler(func(cache.Event[*corev1.Service]) { p.poke() })
	eps.AddHandler(func(cache.Event[*discoveryv1.EndpointSlice]) { p.poke() })
	return p, nil
}

func (p *Proxy) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Start runs the proxy until ctx ends, then closes every listener and
// connection and returns nil.
func (p *Proxy) Start(ctx context.Context) error {
	var informers sync.WaitGroup
	informers.Go(func() { _ = p.svcs.Start(ctx) })
	informers.Go(func() { _ = p.eps.Start(ctx) })
	defer func() {
		p.closeAll()
		p.wg.Wait()
		informers.Wait()
		p.mu.Lock()
		used := p.ifaceUsed
		p.mu.Unlock()
		if used {
			if err := releaseInterface(p.opts.Interface, p.ifaceOwn); err != nil {
				p.log.Error(err, "Cannot remove the cluster IP interface")
			}
		}
	}()
	if !p.svcs.WaitForCacheSync(ctx) || !p.eps.WaitForCacheSync(ctx) {
		return nil // ctx ended
	}
	retry := time.NewTicker(p.opts.RetryInterval)
	defer retry.Stop()
	p.sync(ctx)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.kick:
			p.sync(ctx)
		case <-retry.C:
			p.mu.Lock()
			pending := len(p.failed) > 0 || p.ifaceErr
			if !pending && p.ifaceUsed {
				// Put back cluster IPs something else removed from the
				// interface (an older proxy sharing it removed every
				// address it did not want).
				p.syncAddresses(p.svcs.Store().List())
			}
			p.mu.Unlock()
			if pending {
				p.sync(ctx)
			}
		}
	}
}

// Addresses returns the addresses the proxy listens on, sorted.
func (p *Proxy) Addresses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.listeners))
	for a := range p.listeners {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// sync makes the listeners match the caches.
func (p *Proxy) sync(ctx context.Context) {
	svcs := p.svcs.Store().List()
	want := desired(svcs, p.eps.Store().List(), p.opts.NodePortAddresses)
	p.mu.Lock()
	defer p.mu.Unlock()
	// Closed listeners first (their addresses may go), then the addresses,
	// then new listeners (their addresses must be there).
	for addr, l := range p.listeners {
		if _, ok := want[addr]; !ok {
			l.close()
			delete(p.listeners, addr)
			p.log.V(1).Info("Stopped listening", "address", addr, "service", l.frontend().Service)
		}
	}
	p.syncAddresses(svcs)
	for addr := range p.failed {
		if _, ok := want[addr]; !ok {
			delete(p.failed, addr)
		}
	}
	// One affinity table per Service port (and protocol), kept while the
	// port is served.
	tables := map[string]*stickyTable{}
	for addr, fe := range want {
		key := fe.Service
		if strings.HasPrefix(addr, udpPrefix) {
			key = udpPrefix + key
		}
		t := p.sticky[key]
		if t == nil {
			t = &stickyTable{}
		}
		tables[key], fe.sticky = t, t
		want[addr] = fe
	}
	p.sticky = tables
	for addr, fe := range want {
		if l, ok := p.listeners[addr]; ok {
			l.set(fe)
			continue
		}
		l := &listener{}
		var err error
		if udpAddr, ok := strings.CutPrefix(addr, udpPrefix); ok {
			l.pc, err = (&net.ListenConfig{}).ListenPacket(ctx, "udp", udpAddr)
		} else {
			l.ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
		}
		if err != nil {
			if !p.failed[addr] {
				p.log.Error(err, "Cannot listen for service", "address", addr, "service", fe.Service)
			}
			p.failed[addr] = true
			continue
		}
		delete(p.failed, addr)
		l.set(fe)
		p.listeners[addr] = l
		p.log.V(1).Info("Listening", "address", addr, "service", fe.Service)
		if l.pc != nil {
			p.wg.Go(func() { p.serveUDP(ctx, l) })
		} else {
			p.wg.Go(func() { p.accept(ctx, l) })
		}
	}
}

// syncAddresses makes the proxy's addresses on its interface the hosted
// cluster IPs of svcs. Called with mu held.
func (p *Proxy) syncAddresses(svcs []*corev1.Service) {
	ips := hostedIPs(svcs)
	if len(ips) == 0 && !p.ifaceUsed {
		return
	}
	err := syncInterface(p.opts.Interface, ips, p.ifaceOwn)
	if err != nil && !p.ifaceErr {
		p.log.Error(err, "Cannot put cluster IPs on the proxy's interface", "interface", p.opts.Interface)
	}
	p.ifaceErr, p.ifaceUsed = err != nil, true
}

func (p *Proxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, l := range p.listeners {
		l.close()
		delete(p.listeners, addr)
	}
}

// listener is one listening address, TCP (ln) or UDP (pc); its frontend
// changes in place.
type listener struct {
	ln   net.Listener
	pc   net.PacketConn
	fe   atomic.Pointer[frontend]
	next atomic.Uint64 // round-robin position
}

// stickyTable is where each client IP of one Service port went last: shared
// by the port's listeners (cluster IPs and node ports), as kube-proxy's
// affinity is the Service port's.
type stickyTable struct {
	mu sync.Mutex
	m  map[string]stickyBackend // by client IP; guarded by mu
}

// stickyBackend is where a client IP went last, and when.
type stickyBackend struct {
	backend string
	at      time.Time
}

// order is the order in which serve tries fe's backends for client: from the
// next round-robin position, but with client IP affinity the backend the
// client used last (within the timeout, and still an endpoint) first.
func (l *listener) order(fe frontend, client string, now time.Time) []string {
	n := len(fe.Backends)
	start := int((l.next.Add(1) - 1) % uint64(n))
	out := make([]string, 0, n+1)
	if fe.Affinity > 0 && fe.sticky != nil {
		fe.sticky.mu.Lock()
		sb, ok := fe.sticky.m[client]
		fe.sticky.mu.Unlock()
		if ok && now.Sub(sb.at) < fe.Affinity && slices.Contains(fe.Backends, sb.backend) {
			out = append(out, sb.backend)
		}
	}
	for i := range n {
		if b := fe.Backends[(start+i)%n]; len(out) == 0 || b != out[0] {
			out = append(out, b)
		}
	}
	return out
}

// used records, with affinity, that client went to backend; entries past
// their timeout are dropped on the way.
func (l *listener) used(fe frontend, client, backend string, now time.Time) {
	if fe.Affinity <= 0 || fe.sticky == nil {
		return
	}
	t := fe.sticky
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]stickyBackend{}
	}
	for ip, sb := range t.m {
		if now.Sub(sb.at) >= fe.Affinity {
			delete(t.m, ip)
		}
	}
	t.m[client] = stickyBackend{backend: backend, at: now}
}

func (l *listener) set(fe frontend) { l.fe.Store(&fe) }

// close stops listening.
func (l *listener) close() {
	if l.pc != nil {
		_ = l.pc.Close()
		return
	}
	_ = l.ln.Close()
}

func (l *listener) frontend() frontend { return *l.fe.Load() }

func (p *Proxy) accept(ctx context.Context, l *listener) {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				p.log.Error(err, "Accept failed; listener closed", "address", l.ln.Addr().String())
			}
			return
		}
		p.wg.Go(func() { p.serve(ctx, l, c) })
	}
}

// serve connects c to the next backend that accepts, then copies both ways
// until both sides are done or ctx ends.
func (p *Proxy) serve(ctx context.Context, l *listener, c net.Conn) {
	defer c.Close()
	fe := l.frontend()
	n := len(fe.Backends)
	if n == 0 {
		p.log.V(1).Info("No endpoints; connection refused", "service", fe.Service)
		return
	}
	client, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	var up net.Conn
	for _, b := range l.order(fe, client, time.Now()) {
		conn, err := d.DialContext(ctx, "tcp", b)
		if err == nil {
			up = conn
			l.used(fe, client, b, time.Now())
			break
		}
		p.log.V(1).Info("Backend failed; trying the next", "service", fe.Service, "backend", b, "error", err.Error())
	}
	if up == nil {
		p.log.Info("No endpoint accepted the connection", "service", fe.Service, "endpoints", n)
		return
	}
	defer up.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close(); _ = up.Close() })
	defer stop()
	var wg sync.WaitGroup
	wg.Go(func() { pipe(up, c) })
	pipe(c, up)
	wg.Wait()
}

// pipe copies src to dst, then half-closes dst so the peer sees EOF.
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		_ = dst.Close()
	}
}

// udpIdle is how long a UDP client's flow to its endpoint lives without
// traffic.
const udpIdle = 30 * time.Second

// serveUDP forwards the datagrams of each client address (a flow) to one
// endpoint, chosen as for TCP, and the endpoint's answers back from the
// listening address, until the listener closes.
func (p *Proxy) serveUDP(ctx context.Context, l *listener) {
	var mu sync.Mutex
	flows := map[string]net.Conn{} // by client address; guarded by mu
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range flows {
			_ = c.Close()
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, client, err := l.pc.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		key := client.String()
		mu.Lock()
		up := flows[key]
		mu.Unlock()
		if up == nil {
			fe := l.frontend()
			if len(fe.Backends) == 0 {
				continue
			}
			host, _, _ := net.SplitHostPort(key)
			b := l.order(fe, host, time.Now())[0]
			d := net.Dialer{Timeout: p.opts.DialTimeout}
			if up, err = d.DialContext(ctx, "udp", b); err != nil {
				p.log.V(1).Info("Backend failed", "service", fe.Service, "backend", b, "error", err.Error())
				continue
			}
			l.used(fe, host, b, time.Now())
			mu.Lock()
			flows[key] = up
			mu.Unlock()
			p.wg.Go(func() {
				defer func() {
					mu.Lock()
					delete(flows, key)
					mu.Unlock()
					_ = up.Close()
				}()
				rbuf := make([]byte, 64<<10)
				for {
					_ = up.SetReadDeadline(time.Now().Add(udpIdle))
					n, err := up.Read(rbuf)
					if err != nil {
						return
					}
					if _, err := l.pc.WriteTo(rbuf[:n], client); err != nil {
						return
					}
				}
			})
		}
		_, _ = up.Write(buf[:n])
	}
}
