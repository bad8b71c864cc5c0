package apiendpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/converge-dev/converge/framework/storage"
)

// lease is the value of an API server's lease key.
type lease struct {
	Address   string    `json:"address"`
	Port      int32     `json:"port"`
	RenewTime time.Time `json:"renewTime"`
	// TTLMillis is how long after RenewTime the lease expires; the holder
	// chooses it, as with etcd's leases.
	TTLMillis int64 `json:"ttlMillis"`
}

// expired reports whether the lease has run out at now.
func (v lease) expired(now time.Time) bool {
	return !now.Before(v.RenewTime.Add(time.Duration(v.TTLMillis) * time.Millisecond))
}

// leases keeps this server's lease and tells the live ones apart. Not safe
// for concurrent use.
type leases struct {
	store Store
	self  lease
	rev   int64 // revision of this server's lease as last written (0: none)
}

func (l *leases) key() string { return LeasePrefix + l.self.addrPort().String() }

// addrPort is the lease's address and port (invalid when unreadable).
func (v lease) addrPort() netip.AddrPort {
	a, err := netip.ParseAddr(v.Address)
	if err != nil || v.Port < 1 || v.Port > 65535 {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(v.Port))
}

// refresh writes this server's lease with a new renew time.
func (l *leases) refresh(ctx context.Context) error {
	v := l.self
	v.RenewTime = time.Now().UTC().Truncate(time.Millisecond)
	val, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode lease: %w", err)
	}
	key := l.key()
	for range 3 {
		if l.rev == 0 {
			kv, err := l.store.Get(ctx, key)
			switch {
			case errors.Is(err, storage.ErrNotFound):
				rev, err := l.store.Create(ctx, key, val)
				if errors.Is(err, storage.ErrExists) {
					continue
				}
				if err != nil {
					return fmt.Errorf("create lease %s: %w", key, err)
				}
				l.rev = rev
				return nil
			case err != nil:
				return fmt.Errorf("read lease %s: %w", key, err)
			}
			l.rev = kv.ModRevision
		}
		rev, err := l.store.Update(ctx, key, val, l.rev)
		if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
			l.rev = 0 // changed or deleted by someone else: read again
			continue
		}
		if err != nil {
			return fmt.Errorf("refresh lease %s: %w", key, err)
		}
		l.rev = rev
		return nil
	}
	return fmt.Errorf("refresh lease %s: %w", key, storage.ErrConflict)
}

// release deletes this server's lease.
func (l *leases) release(ctx context.Context) error {
	if l.rev == 0 {
		return nil
	}
	_, _, err := l.store.Delete(ctx, l.key(), l.rev)
	if err != nil && !errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
		return fmt.Errorf("delete lease %s: %w", l.key(), err)
	}
	l.rev = 0
	return nil
}

// live lists the leases and returns the addresses and ports of the live ones.
// This server's own lease is live while it holds one; another one is live
// until its renew time plus its TTL has passed on this server's clock.
// Expired leases are deleted (conditioned on the revision read, so a refresh
// in between wins).
func (l *leases) live(ctx context.Context, now time.Time) ([]netip.AddrPort, error) {
	res, err := l.store.List(ctx, LeasePrefix, storage.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	var out []netip.AddrPort
	for _, kv := range res.Items {
		// An unreadable lease names no address and has expired.
		var v lease
		_ = json.Unmarshal(kv.Value, &v)
		own := kv.Key == l.key() && l.rev != 0
		if !own && v.expired(now) {
			if _, _, err := l.store.Delete(ctx, kv.Key, kv.ModRevision); err != nil &&
				!errors.Is(err, storage.ErrNotFound) && !errors.Is(err, storage.ErrConflict) {
				return nil, fmt.Errorf("delete expired lease %s: %w", kv.Key, err)
			}
			continue
		}
		if ap := v.addrPort(); ap.IsValid() {
			out = append(out, ap)
		}
	}
	slices.SortFunc(out, netip.AddrPort.Compare)
	return slices.Compact(out), nil
}
