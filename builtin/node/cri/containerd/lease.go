package containerd

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/containerd/containerd/v2/core/leases"
)

// Leases protect a new snapshot from containerd's garbage collection until
// the container that uses it exists. client.NewContainer makes and deletes
// one per container (two database writes per start); the runtime instead
// shares one for a while and lets containerd expire it.
const (
	leaseTTL   = time.Hour
	leaseRenew = 10 * time.Minute // a new lease after this: none in use is near its expiry
)

// startLease is the lease the runtime's container creations share.
type startLease struct {
	mu    sync.Mutex
	id    string    // guarded by mu
	until time.Time // when to make a new one; guarded by mu
}

// withLease returns ctx with the shared start lease, made when there is none
// or it is older than leaseRenew.
func (r *Runtime) withLease(ctx context.Context) (context.Context, error) {
	r.lease.mu.Lock()
	defer r.lease.mu.Unlock()
	if r.lease.id == "" || time.Now().After(r.lease.until) {
		l, err := r.client.LeasesService().Create(ctx, leases.WithRandomID(), leases.WithExpiration(leaseTTL),
			leases.WithLabel("converge.dev/purpose", "container-start"))
		if err != nil {
			return ctx, fmt.Errorf("create a lease: %w", err)
		}
		r.lease.id, r.lease.until = l.ID, time.Now().Add(leaseRenew)
	}
	return leases.WithLease(ctx, r.lease.id), nil
}

// dropLease forgets the shared lease (one found gone).
func (r *Runtime) dropLease() {
	r.lease.mu.Lock()
	r.lease.id = ""
	r.lease.mu.Unlock()
}
