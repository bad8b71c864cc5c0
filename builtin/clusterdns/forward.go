package clusterdns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// forwarder sends questions outside the cluster domain to the upstream
// servers: the configured ones, or those of a resolv.conf (re-read when it
// changes).
type forwarder struct {
	fixed      []string // host:port; when set, resolvConf is not read
	resolvConf string
	timeout    time.Duration
	// self reports whether an upstream address is one this server listens on
	// (a host whose resolv.conf names the cluster DNS IP would loop).
	self func(addr string) bool

	mu      sync.Mutex
	modTime time.Time // of resolvConf when servers was read; guarded by mu
	servers []string  // from resolvConf; guarded by mu
}

var errNoUpstream = errors.New("no upstream DNS server")

// upstreams are the servers to ask, in order.
func (f *forwarder) upstreams() []string {
	list := f.fixed
	if len(list) == 0 {
		list = f.fromResolvConf()
	}
	return slices.DeleteFunc(slices.Clone(list), f.self)
}

func (f *forwarder) fromResolvConf() []string {
	fi, err := os.Stat(f.resolvConf)
	if err != nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fi.ModTime().Equal(f.modTime) {
		return f.servers
	}
	cc, err := dns.ClientConfigFromFile(f.resolvConf)
	if err != nil {
		return f.servers
	}
	f.servers, f.modTime = nil, fi.ModTime()
	for _, s := range cc.Servers {
		f.servers = append(f.servers, net.JoinHostPort(s, cc.Port))
	}
	return f.servers
}

// exchange asks the upstream servers in turn (UDP, then TCP when the answer
// was truncated) and returns the first answer that is not SERVFAIL or
// REFUSED.
func (f *forwarder) exchange(ctx context.Context, req *dns.Msg) (*dns.Msg, error) {
	servers := f.upstreams()
	if len(servers) == 0 {
		return nil, errNoUpstream
	}
	q := req.Copy()
	q.Id = dns.Id()
	if q.IsEdns0() == nil {
		q.SetEdns0(dns.DefaultMsgSize, false)
	}
	var errs []error
	for _, s := range servers {
		resp, err := f.ask(ctx, q, s)
		if err == nil && resp.Rcode != dns.RcodeServerFailure && resp.Rcode != dns.RcodeRefused {
			resp.Id = req.Id
			return resp, nil
		}
		if err == nil {
			err = fmt.Errorf("%s answered %s", s, dns.RcodeToString[resp.Rcode])
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (f *forwarder) ask(ctx context.Context, q *dns.Msg, server string) (*dns.Msg, error) {
	c := &dns.Client{Net: "udp", Timeout: f.timeout, UDPSize: dns.DefaultMsgSize}
	resp, _, err := c.ExchangeContext(ctx, q, server)
	if err == nil && resp.Truncated {
		c.Net = "tcp"
		resp, _, err = c.ExchangeContext(ctx, q, server)
	}
	if err != nil {
		return nil, fmt.Errorf("ask %s: %w", server, err)
	}
	return resp, nil
}
