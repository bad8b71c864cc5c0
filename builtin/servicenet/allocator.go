package servicenet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/storage"
)

// Defaults of Options.
const (
	DefaultServiceCIDR   = "127.96.0.0/12"
	DefaultNodePortRange = "30000-32767"
)

// Storage key prefixes of the reservations.
const (
	IPReservationPrefix       = "/registry/ranges/serviceips/"
	NodePortReservationPrefix = "/registry/ranges/servicenodeports/"
	// ServicePrefix is where the API server stores Services.
	ServicePrefix = "/registry/core/services/"
)

// Errors of the allocator. Their texts are Kubernetes' (they end up in API
// error messages kubectl prints), hence no package prefix.
var (
	// ErrFull means no value of the range is free.
	ErrFull = errors.New("range is full")
	// ErrIPAllocated means the requested IP belongs to another Service.
	ErrIPAllocated = errors.New("provided IP is already allocated")
	// ErrPortAllocated means the requested node port belongs to another Service.
	ErrPortAllocated = errors.New("provided port is already allocated")
	// ErrNotInRange is wrapped by the errors for values outside the range.
	ErrNotInRange = errors.New("not in the valid range")
)

// notInRange is ErrNotInRange with Kubernetes' message.
type notInRange struct{ msg string }

func (e notInRange) Error() string        { return e.msg }
func (e notInRange) Is(target error) bool { return target == ErrNotInRange }

// Store is the part of storage.Interface the allocator uses.
type Store interface {
	Get(ctx context.Context, key string) (storage.KeyValue, error)
	Create(ctx context.Context, key string, value []byte) (int64, error)
	Delete(ctx context.Context, key string, expected int64) (storage.KeyValue, int64, error)
	List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error)
}

var _ Store = storage.Interface(nil)

// Options configure an Allocator. The zero value means the defaults.
type Options struct {
	// ServiceCIDR is the IPv4 range cluster IPs come from (default
	// DefaultServiceCIDR).
	ServiceCIDR string
	// NodePortRange is the inclusive node port range, "FIRST-LAST" (default
	// DefaultNodePortRange).
	NodePortRange string
	// Logger receives what releases and repairs cannot return as errors.
	Logger logr.Logger
}

// Owner is the Service holding a reservation.
type Owner struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

func (o Owner) String() string { return o.Namespace + "/" + o.Name }

// Allocator reserves cluster IPs and node ports in storage. It keeps no state
// of its own, so any number of Allocators (one per API server) may share a
// store. It is safe for concurrent use.
type Allocator struct {
	store Store
	log   logr.Logger
	ips   ipRange
	ports portRange
	ipSet pool
	npSet pool
}

// New returns an Allocator over store.
func New(store Store, opts Options) (*Allocator, error) {
	if opts.ServiceCIDR == "" {
		opts.ServiceCIDR = DefaultServiceCIDR
	}
	if opts.NodePortRange == "" {
		opts.NodePortRange = DefaultNodePortRange
	}
	var errs []error
	if store == nil {
		errs = append(errs, errors.New("servicenet: a store is required"))
	}
	ips, err := parseIPRange(opts.ServiceCIDR)
	if err != nil {
		errs = append(errs, fmt.Errorf("servicenet: %w", err))
	}
	ports, err := parsePortRange(opts.NodePortRange)
	if err != nil {
		errs = append(errs, fmt.Errorf("servicenet: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	a := &Allocator{store: store, log: opts.Logger, ips: ips, ports: ports}
	withheld := map[int]bool{apiServerIndex: true}
	if clusterDNSIndex < ips.size {
		withheld[clusterDNSIndex] = true
	}
	a.ipSet = pool{store: store, prefix: IPReservationPrefix, size: ips.size, withheld: withheld, taken: ErrIPAllocated,
		name: func(i int) string { return ips.at(i).String() }}
	a.npSet = pool{store: store, prefix: NodePortReservationPrefix, size: ports.size(), taken: ErrPortAllocated,
		name: func(i int) string { return strconv.Itoa(ports.first + i) }}
	return a, nil
}

// ServiceCIDR is the range cluster IPs come from.
func (a *Allocator) ServiceCIDR() netip.Prefix { return a.ips.prefix }

// Indices (among the usable addresses) of the well-known cluster IPs.
const (
	apiServerIndex  = 0 // the first usable address: 10.96.0.1 in 10.96.0.0/12
	clusterDNSIndex = 9 // the tenth address, as kubeadm picks: 10.96.0.10
)

// APIServerServiceIP is the cluster IP of the default/kubernetes Service: the
// first usable address of the service CIDR. Dynamic allocation never hands it
// out; only a Service that asks for it explicitly gets it.
func (a *Allocator) APIServerServiceIP() netip.Addr { return a.ips.at(apiServerIndex) }

// ClusterDNSIP is the cluster IP of the kube-system/kube-dns Service (the
// cluster DNS server, see builtin/clusterdns): the tenth address of the
// service CIDR (127.96.0.10 by default), as kubeadm picks it. Like
// APIServerServiceIP, dynamic allocation never hands it out. ok is false when
// the CIDR is too small to have one (/29 and smaller).
func (a *Allocator) ClusterDNSIP() (ip netip.Addr, ok bool) {
	if clusterDNSIndex >= a.ips.size {
		return netip.Addr{}, false
	}
	return a.ips.at(clusterDNSIndex), true
}

// ClusterDNSIP is the cluster IP of the kube-system/kube-dns Service for a
// service CIDR ("" means DefaultServiceCIDR), as Allocator.ClusterDNSIP; an
// error when the CIDR is invalid or too small.
func ClusterDNSIP(serviceCIDR string) (netip.Addr, error) {
	if serviceCIDR == "" {
		serviceCIDR = DefaultServiceCIDR
	}
	r, err := parseIPRange(serviceCIDR)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("servicenet: %w", err)
	}
	if clusterDNSIndex >= r.size {
		return netip.Addr{}, fmt.Errorf("servicenet: service CIDR %s is too small for a cluster DNS address (its tenth address)", serviceCIDR)
	}
	return r.at(clusterDNSIndex), nil
}

// APIServerServiceIP is the cluster IP of the default/kubernetes Service for
// a service CIDR ("" means DefaultServiceCIDR), as Allocator.APIServerServiceIP.
func APIServerServiceIP(serviceCIDR string) (netip.Addr, error) {
	if serviceCIDR == "" {
		serviceCIDR = DefaultServiceCIDR
	}
	r, err := parseIPRange(serviceCIDR)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("servicenet: %w", err)
	}
	return r.at(apiServerIndex), nil
}

// NodePortRange is the inclusive range node ports come from.
func (a *Allocator) NodePortRange() (first, last int) { return a.ports.first, a.ports.last }

// AllocateIP reserves a free cluster IP for owner (ErrFull when none is left).
func (a *Allocator) AllocateIP(ctx context.Context, owner Owner) (netip.Addr, error) {
	r, err := a.ipSet.next(ctx, owner)
	if err != nil {
		return netip.Addr{}, err
	}
	return netip.MustParseAddr(r.name), nil
}

// ReserveIP reserves ip for owner: ErrNotInRange outside the service CIDR,
// ErrIPAllocated when another Service holds it, nil when owner already does.
func (a *Allocator) ReserveIP(ctx context.Context, ip netip.Addr, owner Owner) error {
	_, err := a.reserveIP(ctx, ip, owner)
	return err
}

func (a *Allocator) reserveIP(ctx context.Context, ip netip.Addr, owner Owner) (reservation, error) {
	if _, ok := a.ips.offset(ip); !ok {
		return reservation{}, notInRange{"provided IP is not in the valid range. The range of valid IPs is " + a.ips.String()}
	}
	return a.ipSet.reserve(ctx, ip.String(), owner)
}

// ReleaseIP releases ip if owner (by uid) holds it.
func (a *Allocator) ReleaseIP(ctx context.Context, ip netip.Addr, owner Owner) error {
	return a.ipSet.release(ctx, ip.String(), owner.UID)
}

// AllocateNodePort reserves a free node port for owner (ErrFull when none is left).
func (a *Allocator) AllocateNodePort(ctx context.Context, owner Owner) (int, error) {
	r, err := a.npSet.next(ctx, owner)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(r.name)
}

// ReserveNodePort reserves port for owner: ErrNotInRange outside the node port
// range, ErrPortAllocated when another Service holds it, nil when owner already does.
func (a *Allocator) ReserveNodePort(ctx context.Context, port int, owner Owner) error {
	_, err := a.reserveNodePort(ctx, port, owner)
	return err
}

func (a *Allocator) reserveNodePort(ctx context.Context, port int, owner Owner) (reservation, error) {
	if !a.ports.contains(port) {
		return reservation{}, notInRange{"provided port is not in the valid range. The range of valid ports is " + a.ports.String()}
	}
	return a.npSet.reserve(ctx, strconv.Itoa(port), owner)
}

// ReleaseNodePort releases port if owner (by uid) holds it.
func (a *Allocator) ReleaseNodePort(ctx context.Context, port int, owner Owner) error {
	return a.npSet.release(ctx, strconv.Itoa(port), owner.UID)
}

// reservation is one reserved value. created says whether this call created the
// key (rather than finding it held by the same owner); rev is its revision.
type reservation struct {
	pool    *pool
	name    string
	rev     int64
	created bool
}

// undo releases the reservation if this call created it.
func (r reservation) undo(ctx context.Context) error {
	if !r.created {
		return nil
	}
	_, _, err := r.pool.store.Delete(ctx, r.pool.prefix+r.name, r.rev)
	if errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrConflict) {
		return nil // already released, or no longer ours
	}
	if err != nil {
		return fmt.Errorf("release %s%s: %w", r.pool.prefix, r.name, err)
	}
	return nil
}

// pool is one kind of reservation: keys prefix+name(i) for i in [0, size).
// The withheld values are only handed out on request (reserve), never by next.
type pool struct {
	store    Store
	prefix   string
	size     int
	withheld map[int]bool
	name     func(i int) string
	taken    error // the error for a value another owner holds
}

// randomTries is how many random free-looking values next tries before it
// lists the reservations; in a mostly empty range the first one succeeds.
const randomTries = 4

// reserve creates the reservation of name for owner, or finds it held by owner.
func (p *pool) reserve(ctx context.Context, name string, owner Owner) (reservation, error) {
	val, err := json.Marshal(owner)
	if err != nil {
		return reservation{}, err
	}
	key := p.prefix + name
	for range 4 {
		rev, err := p.store.Create(ctx, key, val)
		if err == nil {
			return reservation{pool: p, name: name, rev: rev, created: true}, nil
		}
		if !errors.Is(err, storage.ErrExists) {
			return reservation{}, fmt.Errorf("reserve %s: %w", key, err)
		}
		kv, err := p.store.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			continue // released in between: try again
		}
		if err != nil {
			return reservation{}, fmt.Errorf("read %s: %w", key, err)
		}
		if holder, err := decodeOwner(kv.Value); err == nil && holder.UID == owner.UID && owner.UID != "" {
			return reservation{pool: p, name: name, rev: kv.ModRevision}, nil
		}
		return reservation{}, p.taken
	}
	return reservation{}, p.taken
}

// next reserves a free value: a few random ones first, then a scan of the
// values the reservations listed as free, from a random start.
func (p *pool) next(ctx context.Context, owner Owner) (reservation, error) {
	if p.size-len(p.withheld) <= 0 {
		return reservation{}, ErrFull
	}
	for range min(randomTries, p.size) {
		i := rand.IntN(p.size)
		if p.withheld[i] {
			continue
		}
		r, err := p.tryCreate(ctx, p.name(i), owner)
		if err != nil || r.created {
			return r, err
		}
	}
	held, err := p.list(ctx)
	if err != nil {
		return reservation{}, err
	}
	if len(held) >= p.size {
		return reservation{}, ErrFull
	}
	start := rand.IntN(p.size)
	for i := range p.size {
		j := (start + i) % p.size
		if p.withheld[j] {
			continue
		}
		name := p.name(j)
		if _, ok := held[name]; ok {
			continue
		}
		r, err := p.tryCreate(ctx, name, owner)
		if err != nil || r.created {
			return r, err
		}
	}
	return reservation{}, ErrFull
}

// tryCreate creates the reservation if the value is free; a reservation with
// created false means it was not.
func (p *pool) tryCreate(ctx context.Context, name string, owner Owner) (reservation, error) {
	val, err := json.Marshal(owner)
	if err != nil {
		return reservation{}, err
	}
	rev, err := p.store.Create(ctx, p.prefix+name, val)
	if errors.Is(err, storage.ErrExists) {
		return reservation{}, nil
	}
	if err != nil {
		return reservation{}, fmt.Errorf("reserve %s%s: %w", p.prefix, name, err)
	}
	return reservation{pool: p, name: name, rev: rev, created: true}, nil
}

// release deletes the reservation of name while uid holds it.
func (p *pool) release(ctx context.Context, name, uid string) error {
	key := p.prefix + name
	for range 4 {
		kv, err := p.store.Get(ctx, key)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		if holder, err := decodeOwner(kv.Value); err == nil && holder.UID != uid {
			return nil // someone else's now
		}
		_, _, err = p.store.Delete(ctx, key, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) {
			continue
		}
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("release %s: %w", key, err)
		}
		return nil
	}
	return fmt.Errorf("release %s: %w", key, storage.ErrConflict)
}

// held is a listed reservation.
type held struct {
	owner Owner
	rev   int64
}

// list returns every reservation of the pool by name.
func (p *pool) list(ctx context.Context) (map[string]held, error) {
	out := map[string]held{}
	opts := storage.ListOptions{Limit: 1000}
	for {
		res, err := p.store.List(ctx, p.prefix, opts)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", p.prefix, err)
		}
		for _, kv := range res.Items {
			o, _ := decodeOwner(kv.Value) // an unreadable value is held by nobody
			out[strings.TrimPrefix(kv.Key, p.prefix)] = held{owner: o, rev: kv.ModRevision}
		}
		if !res.More || len(res.Items) == 0 {
			return out, nil
		}
		opts.Revision = res.Revision
		opts.StartKey = res.Items[len(res.Items)-1].Key + "\x00"
	}
}

func decodeOwner(b []byte) (Owner, error) {
	var o Owner
	err := json.Unmarshal(b, &o)
	return o, err
}
