package apiendpoints

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/storage"
)

// Names and defaults, as in Kubernetes.
const (
	// Namespace and Name of the Service, Endpoints and EndpointSlice.
	Namespace = "default"
	Name      = "kubernetes"
	// PortName is the name of the Service's only port.
	PortName = "https"
	// DefaultServicePort is the Service's port.
	DefaultServicePort = 443
	// DefaultInterval is how often a Reconciler refreshes its lease and the objects.
	DefaultInterval = 10 * time.Second
	// DefaultLeaseTTL is how long a lease counts as live after its last refresh.
	DefaultLeaseTTL = 15 * time.Second
	// LeasePrefix is the storage prefix of the API servers' leases.
	LeasePrefix = "/registry/masterleases/"
)

// Client is the part of the API client a Reconciler writes objects with.
type Client interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
	Delete(ctx context.Context, obj api.Object, opts ...client.DeleteOption) error
}

// Store is the part of storage.Interface the leases use.
type Store interface {
	Get(ctx context.Context, key string) (storage.KeyValue, error)
	Create(ctx context.Context, key string, value []byte) (int64, error)
	Update(ctx context.Context, key string, value []byte, expected int64) (int64, error)
	Delete(ctx context.Context, key string, expected int64) (storage.KeyValue, int64, error)
	List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error)
}

var _ Store = storage.Interface(nil)

// Options configure a Reconciler. Client, Store, ServiceIP, Address and Port
// are required; zero values of the others mean their defaults.
type Options struct {
	// Client writes the Service, Endpoints and EndpointSlice (through the API
	// server, with rights on them).
	Client Client
	// Store holds the leases (the API server's storage).
	Store Store
	// ServiceIP is the Service's cluster IP (servicenet's APIServerServiceIP).
	ServiceIP netip.Addr
	// ServicePort is the Service's port (default 443).
	ServicePort int32
	// Address is the address this API server is reached at (its endpoint).
	Address netip.Addr
	// Port is this API server's port.
	Port int32
	// Interval is how often the lease and the objects are refreshed.
	Interval time.Duration
	// LeaseTTL is how long this server's lease counts as live after each
	// refresh (it is written into the lease, so every server expires it alike).
	LeaseTTL time.Duration
	// Logger receives failed passes.
	Logger logr.Logger
}

func (o *Options) complete() error {
	if o.ServicePort == 0 {
		o.ServicePort = DefaultServicePort
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	var errs []error
	if o.Client == nil {
		errs = append(errs, errors.New("apiendpoints: a client is required"))
	}
	if o.Store == nil {
		errs = append(errs, errors.New("apiendpoints: a store is required"))
	}
	if !o.ServiceIP.IsValid() {
		errs = append(errs, errors.New("apiendpoints: the service IP is required"))
	}
	if !o.Address.IsValid() || o.Address.IsUnspecified() {
		errs = append(errs, fmt.Errorf("apiendpoints: address %q is not an endpoint address", o.Address))
	}
	if o.Port < 1 || o.Port > 65535 {
		errs = append(errs, fmt.Errorf("apiendpoints: port %d out of range", o.Port))
	}
	if o.ServicePort < 1 || o.ServicePort > 65535 {
		errs = append(errs, fmt.Errorf("apiendpoints: service port %d out of range", o.ServicePort))
	}
	if o.LeaseTTL < o.Interval {
		errs = append(errs, fmt.Errorf("apiendpoints: lease TTL %s is shorter than the interval %s", o.LeaseTTL, o.Interval))
	}
	return errors.Join(errs...)
}

// Reconciler keeps one API server's lease and the kubernetes Service, Endpoints
// and EndpointSlice. Sync and Start must not run concurrently.
type Reconciler struct {
	opts   Options
	leases leases
}

// New returns a Reconciler for opts.
func New(opts Options) (*Reconciler, error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	self := lease{Address: opts.Address.String(), Port: opts.Port, TTLMillis: opts.LeaseTTL.Milliseconds()}
	return &Reconciler{opts: opts, leases: leases{store: opts.Store, self: self}}, nil
}

// Sync runs one pass: it refreshes this server's lease, drops expired ones,
// and writes the Service, Endpoints and EndpointSlice where they differ from
// what the live leases say.
func (r *Reconciler) Sync(ctx context.Context) error {
	if err := r.leases.refresh(ctx); err != nil {
		return err
	}
	live, err := r.leases.live(ctx, time.Now())
	if err != nil {
		return err
	}
	return r.write(ctx, choose(live))
}

// Start syncs now and then every Interval until ctx ends; failed passes are
// logged and retried at the next one. When ctx ends it deletes this server's
// lease and removes its address (best effort, a few seconds at most), and
// returns nil.
func (r *Reconciler) Start(ctx context.Context) error {
	log := r.opts.Logger
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		if err := r.Sync(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Sync of the kubernetes service endpoints failed")
		}
		select {
		case <-ctx.Done():
			r.leave(context.WithoutCancel(ctx))
			return nil
		case <-t.C:
		}
	}
}

// leave deletes this server's lease and writes the endpoints without it.
func (r *Reconciler) leave(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := r.leases.release(ctx); err != nil {
		r.opts.Logger.V(1).Info("Lease not released", "error", err.Error())
		return
	}
	live, err := r.leases.live(ctx, time.Now())
	if err == nil && len(live) > 0 {
		err = r.write(ctx, choose(live))
	}
	if err != nil {
		r.opts.Logger.V(1).Info("Endpoints not updated on leaving", "error", err.Error())
	}
}
