package encryption

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/converge-dev/converge/framework/storage"
)

// keyRoot is the root of the API server's keys: /registry/<group|core>/<resource>/...
const keyRoot = "/registry/"

type rule struct {
	group, resource string // "*" matches any
	providers       *Providers
}

// Store is a storage.Interface that encrypts the values of the configured
// resources. It is safe for concurrent use.
type Store struct {
	inner storage.Interface
	rules []rule

	mu    sync.Mutex
	cache map[string]*Providers // by "<group>/<resource>"; nil entry: not encrypted
}

var _ storage.Interface = (*Store)(nil)

// Wrap returns inner with the values of cfg's resources encrypted. A nil cfg,
// or one without resources, returns inner itself.
func Wrap(inner storage.Interface, cfg *Configuration) (storage.Interface, error) {
	if cfg == nil || len(cfg.Resources) == 0 {
		return inner, nil
	}
	s := &Store{inner: inner, cache: map[string]*Providers{}}
	var errs []error
	for i, rc := range cfg.Resources {
		p, err := newProviders(rc.Providers)
		if err != nil {
			errs = append(errs, fmt.Errorf("encryption configuration resources[%d]: %w", i, err))
			continue
		}
		if len(rc.Resources) == 0 {
			errs = append(errs, fmt.Errorf("encryption configuration resources[%d]: no resources", i))
		}
		for _, r := range rc.Resources {
			res, group, _ := strings.Cut(strings.ToLower(r), ".")
			if group == "" {
				group = "core"
			}
			if res == "" {
				errs = append(errs, fmt.Errorf("encryption configuration resources[%d]: invalid resource %q", i, r))
				continue
			}
			s.rules = append(s.rules, rule{group: group, resource: res, providers: p})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// providersFor returns the providers of the resource a key or prefix belongs
// to, nil when its values are stored as they are.
func (s *Store) providersFor(key string) *Providers {
	rest, ok := strings.CutPrefix(key, keyRoot)
	if !ok {
		return nil
	}
	group, rest, ok := strings.Cut(rest, "/")
	if !ok {
		return nil
	}
	resource, _, ok := strings.Cut(rest, "/")
	if !ok || resource == "" {
		return nil
	}
	id := group + "/" + resource
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.cache[id]; ok {
		return p
	}
	var p *Providers
	for _, r := range s.rules {
		if (r.group == "*" || r.group == group) && (r.resource == "*" || r.resource == resource) {
			p = r.providers
			break
		}
	}
	s.cache[id] = p
	return p
}

func (s *Store) decodeKV(p *Providers, kv *storage.KeyValue) error {
	if p == nil || len(kv.Value) == 0 {
		return nil
	}
	plain, stale, err := p.decode(kv.Value, kv.Key)
	if err != nil {
		return err
	}
	kv.Value, kv.Stale = plain, stale
	return nil
}

// Get returns the key with its value decrypted.
func (s *Store) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	kv, err := s.inner.Get(ctx, key)
	if err != nil {
		return kv, err
	}
	if err := s.decodeKV(s.providersFor(key), &kv); err != nil {
		return storage.KeyValue{}, fmt.Errorf("get: %w", err)
	}
	return kv, nil
}

func (s *Store) encode(key string, value []byte) ([]byte, error) {
	p := s.providersFor(key)
	if p == nil {
		return value, nil
	}
	out, err := p.encode(value, key)
	if err != nil {
		return nil, fmt.Errorf("encrypt %q: %w", key, err)
	}
	return out, nil
}

// Create stores the key's value encrypted.
func (s *Store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	data, err := s.encode(key, value)
	if err != nil {
		return 0, err
	}
	return s.inner.Create(ctx, key, data)
}

// Update stores the key's new value encrypted.
func (s *Store) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	data, err := s.encode(key, value)
	if err != nil {
		return 0, err
	}
	return s.inner.Update(ctx, key, data, expected)
}

// Delete removes the key and returns its last value decrypted.
func (s *Store) Delete(ctx context.Context, key string, expected int64) (storage.KeyValue, int64, error) {
	kv, rev, err := s.inner.Delete(ctx, key, expected)
	if err != nil {
		return kv, rev, err
	}
	if err := s.decodeKV(s.providersFor(key), &kv); err != nil {
		// The key is gone; its last value cannot be shown.
		kv.Value = nil
	}
	return kv, rev, nil
}

// List returns the keys under prefix with their values decrypted.
func (s *Store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	res, err := s.inner.List(ctx, prefix, opts)
	if err != nil {
		return res, err
	}
	p := s.providersFor(prefix)
	for i := range res.Items {
		it := &res.Items[i]
		q := p
		if q == nil {
			// A prefix above one resource (/registry/) lists several.
			if q = s.providersFor(it.Key); q == nil {
				continue
			}
		}
		if err := s.decodeKV(q, it); err != nil {
			return storage.ListResult{}, fmt.Errorf("list %q: %w", prefix, err)
		}
	}
	return res, nil
}

// Count returns the number of keys under prefix.
func (s *Store) Count(ctx context.Context, prefix string) (int64, error) {
	return s.inner.Count(ctx, prefix)
}

// RequestProgress forwards to the inner store when it is a
// storage.ProgressRequester.
func (s *Store) RequestProgress(ctx context.Context) error {
	if pr, ok := s.inner.(storage.ProgressRequester); ok {
		return pr.RequestProgress(ctx)
	}
	return errors.ErrUnsupported
}

// Watch streams changes under prefix with values decrypted. A value that
// does not decrypt ends the watch with an error event.
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) <-chan storage.Event {
	in := s.inner.Watch(ctx, prefix, fromRevision)
	if s.providersFor(prefix) == nil && strings.Count(strings.TrimPrefix(prefix, keyRoot), "/") >= 2 {
		return in
	}
	out := make(chan storage.Event, cap(in))
	go func() {
		defer close(out)
		for e := range in {
			if e.Err == nil && e.Type != storage.EventProgress {
				p := s.providersFor(e.KV.Key)
				if err := s.decodeKV(p, &e.KV); err != nil {
					e = storage.Event{Err: fmt.Errorf("watch %q: %w", prefix, err)}
				} else if e.Prev != nil {
					prev := *e.Prev
					if err := s.decodeKV(p, &prev); err != nil {
						e = storage.Event{Err: fmt.Errorf("watch %q: %w", prefix, err)}
					} else {
						e.Prev = &prev
					}
				}
			}
			select {
			case out <- e:
			case <-ctx.Done():
				// Drain so the inner watch can finish.
				for range in {
				}
				return
			}
			if e.Err != nil {
				for range in {
				}
				return
			}
		}
	}()
	return out
}

// CurrentRevision returns the latest store revision.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	return s.inner.CurrentRevision(ctx)
}

// Compact discards history before revision.
func (s *Store) Compact(ctx context.Context, revision int64) error {
	return s.inner.Compact(ctx, revision)
}
