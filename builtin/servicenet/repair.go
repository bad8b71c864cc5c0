package servicenet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/storage"
)

// DefaultRepairInterval is how often Repairer.Start runs a pass (Kubernetes'
// repair controllers also run every three minutes).
const DefaultRepairInterval = 3 * time.Minute

// RepairResult says what one repair pass changed or found.
type RepairResult struct {
	// Reserved lists reservation keys created for existing Services.
	Reserved []string
	// Released lists leaked reservation keys that were released.
	Released []string
	// Suspected lists reservations no Service uses, released next pass if unchanged.
	Suspected []string
	// Problems lists Services whose values cannot be reserved (held by another
	// Service, outside the ranges); they are logged, not changed.
	Problems []string
}

// Repairer reconciles reservations with the Services in storage. A pass is
// safe to run on several API servers at once. Its state (leak suspects) is in
// memory; a restart only delays releases by one pass.
type Repairer struct {
	alloc    *Allocator
	interval time.Duration
	suspects map[string]int64 // key → mod revision seen unused in the last pass
}

// NewRepairer returns a Repairer for alloc's store and ranges; interval 0
// means DefaultRepairInterval.
func NewRepairer(alloc *Allocator, interval time.Duration) *Repairer {
	if interval <= 0 {
		interval = DefaultRepairInterval
	}
	return &Repairer{alloc: alloc, interval: interval, suspects: map[string]int64{}}
}

// Start runs a pass now and then every interval until ctx ends; failed passes
// are logged and retried at the next tick. It returns nil when ctx ends.
func (r *Repairer) Start(ctx context.Context) error {
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		res, err := r.RunOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.alloc.log.Error(err, "Service allocation repair failed")
		case err == nil && (len(res.Reserved)+len(res.Released) > 0):
			r.alloc.log.Info("Repaired service allocations", "reserved", res.Reserved, "released", res.Released)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// RunOnce runs one pass: it lists reservations, then Services; reserves the
// values of Services that lack a reservation; and releases reservations that
// no Service uses and that were already unused, at the same revision, in the
// previous pass. Not being run concurrently with itself is the caller's job.
func (r *Repairer) RunOnce(ctx context.Context) (RepairResult, error) {
	var res RepairResult
	a := r.alloc
	// Reservations first: one made after this list is not judged in this pass.
	ipHeld, err := a.ipSet.list(ctx)
	if err != nil {
		return res, err
	}
	npHeld, err := a.npSet.list(ctx)
	if err != nil {
		return res, err
	}
	svcs, err := listServices(ctx, a.store)
	if err != nil {
		return res, err
	}
	inUse := map[string]bool{} // key held by its owner's Service
	for _, svc := range svcs {
		owner := ownerOf(svc)
		for _, ip := range serviceIPs(svc) {
			key := IPReservationPrefix + ip.String()
			if h, ok := ipHeld[ip.String()]; ok && h.owner.UID == owner.UID {
				inUse[key] = true
				continue
			}
			rv, err := a.reserveIP(ctx, ip, owner)
			switch {
			case err == nil:
				inUse[key] = true
				if rv.created {
					res.Reserved = append(res.Reserved, key)
				}
			case isAllocationError(err):
				res.Problems = append(res.Problems, fmt.Sprintf("service %s: cluster IP %s: %v", owner, ip, err))
			default:
				return res, err
			}
		}
		for _, np := range nodePorts(svc) {
			key := NodePortReservationPrefix + strconv.Itoa(np)
			if h, ok := npHeld[strconv.Itoa(np)]; ok && h.owner.UID == owner.UID {
				inUse[key] = true
				continue
			}
			rv, err := a.reserveNodePort(ctx, np, owner)
			switch {
			case err == nil:
				inUse[key] = true
				if rv.created {
					res.Reserved = append(res.Reserved, key)
				}
			case isAllocationError(err):
				res.Problems = append(res.Problems, fmt.Sprintf("service %s: node port %d: %v", owner, np, err))
			default:
				return res, err
			}
		}
	}
	for _, p := range res.Problems {
		a.log.Info("Service allocation conflict", "problem", p)
	}
	suspects := map[string]int64{}
	check := func(p *pool, held map[string]held) error {
		for _, name := range slices.Sorted(maps.Keys(held)) {
			h, key := held[name], p.prefix+name
			if inUse[key] {
				continue
			}
			if rev, ok := r.suspects[key]; ok && rev == h.rev {
				_, _, err := a.store.Delete(ctx, key, h.rev)
				if err == nil {
					res.Released = append(res.Released, key)
					continue
				}
				if !errors.Is(err, storage.ErrConflict) && !errors.Is(err, storage.ErrNotFound) {
					return fmt.Errorf("release %s: %w", key, err)
				}
				continue // changed meanwhile: judge it afresh next pass
			}
			suspects[key] = h.rev
			res.Suspected = append(res.Suspected, key)
		}
		return nil
	}
	if err := check(&a.ipSet, ipHeld); err != nil {
		return res, err
	}
	if err := check(&a.npSet, npHeld); err != nil {
		return res, err
	}
	r.suspects = suspects
	return res, nil
}

// listServices reads every stored Service.
func listServices(ctx context.Context, store Store) ([]*corev1.Service, error) {
	var out []*corev1.Service
	opts := storage.ListOptions{Limit: 500}
	for {
		res, err := store.List(ctx, ServicePrefix, opts)
		if err != nil {
			return nil, fmt.Errorf("list services: %w", err)
		}
		for _, kv := range res.Items {
			svc := &corev1.Service{}
			if err := json.Unmarshal(kv.Value, svc); err != nil {
				return nil, fmt.Errorf("decode %s: %w", kv.Key, err)
			}
			out = append(out, svc)
		}
		if !res.More || len(res.Items) == 0 {
			return out, nil
		}
		opts.Revision = res.Revision
		opts.StartKey = res.Items[len(res.Items)-1].Key + "\x00"
	}
}
