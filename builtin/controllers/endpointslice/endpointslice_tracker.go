package endpointslice

import (
	"strconv"
	"sync"

	discoveryv1 "github.com/converge-dev/converge/builtin/api/discovery/v1"
)

// tracker remembers the slice writes of each Service until the informer's
// store reflects them, so a reconcile never acts on a cache that misses its
// own last writes (which would create duplicate slices). It plays the role of
// Kubernetes' endpointSliceTracker, with resourceVersions instead of
// generations.
type tracker struct {
	mu sync.Mutex
	// expect maps service key → slice name → expectation; guarded by mu.
	expect map[string]map[string]expectation
}

// expectation is one write not yet seen in the store: the resourceVersion
// the write returned, or deleted for a delete.
type expectation struct {
	rv      uint64
	deleted bool
}

func newTracker() *tracker { return &tracker{expect: map[string]map[string]expectation{}} }

// wrote records a create or update of s for service key.
func (t *tracker) wrote(key string, s *discoveryv1.EndpointSlice) {
	rv, err := strconv.ParseUint(s.ResourceVersion, 10, 64)
	if err != nil {
		return // not comparable: nothing to wait for
	}
	t.set(key, s.Name, expectation{rv: rv})
}

// deleted records the delete of s for service key.
func (t *tracker) deleted(key string, s *discoveryv1.EndpointSlice) {
	t.set(key, s.Name, expectation{deleted: true})
}

func (t *tracker) set(key, name string, e expectation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.expect[key]
	if !ok {
		m = map[string]expectation{}
		t.expect[key] = m
	}
	m[name] = e
}

// forget drops everything about service key (the Service is gone).
func (t *tracker) forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.expect, key)
}

// satisfied reports whether the slices in the store (all slices of service
// key) reflect every recorded write, dropping the expectations that are met.
func (t *tracker) satisfied(key string, inStore []*discoveryv1.EndpointSlice) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.expect[key]
	if len(m) == 0 {
		return true
	}
	byName := make(map[string]*discoveryv1.EndpointSlice, len(inStore))
	for _, s := range inStore {
		byName[s.Name] = s
	}
	for name, e := range m {
		s, ok := byName[name]
		switch {
		case e.deleted && !ok:
			delete(m, name)
		case !e.deleted && ok:
			if rv, err := strconv.ParseUint(s.ResourceVersion, 10, 64); err != nil || rv >= e.rv {
				delete(m, name)
			}
		}
	}
	if len(m) == 0 {
		delete(t.expect, key)
		return true
	}
	return false
}
