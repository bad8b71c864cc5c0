package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/converge-dev/converge/framework/api"
)

// NamespaceIndex is the name of the index every Store maintains: it maps a
// namespace ("" for cluster-scoped objects) to the objects in it.
const NamespaceIndex = "namespace"

// IndexFunc returns the index values of an object (none, one or several).
type IndexFunc[T api.Object] func(obj T) []string

// Indexers names the index functions of a Store.
type Indexers[T api.Object] map[string]IndexFunc[T]

// KeyOf returns the store key of obj: "namespace/name", or "name" for
// cluster-scoped objects.
func KeyOf(obj api.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + obj.GetName()
	}
	return obj.GetName()
}

// Store is a thread-safe map of objects keyed by KeyOf, with named indexes.
// Objects are stored and returned as they are (pointers are shared): callers
// must not modify them; copy first.
type Store[T api.Object] struct {
	indexers Indexers[T]

	mu sync.RWMutex
	// items maps key → object; guarded by mu.
	items map[string]T
	// indices maps index name → value → set of keys; guarded by mu.
	indices map[string]map[string]map[string]struct{}
	// rv is the resourceVersion of the last Replace or applied change; guarded by mu.
	rv string
}

// NewStore returns an empty store with the given indexers plus the built-in
// NamespaceIndex. It panics if indexers redefines NamespaceIndex.
func NewStore[T api.Object](indexers Indexers[T]) *Store[T] {
	all := Indexers[T]{NamespaceIndex: func(obj T) []string { return []string{obj.GetNamespace()} }}
	for name, fn := range indexers {
		if name == NamespaceIndex {
			panic("cache: NewStore: index name " + NamespaceIndex + " is reserved")
		}
		all[name] = fn
	}
	s := &Store[T]{indexers: all, items: map[string]T{}, indices: map[string]map[string]map[string]struct{}{}}
	for name := range all {
		s.indices[name] = map[string]map[string]struct{}{}
	}
	return s
}

// ErrIndexExists is matched (errors.Is) by the error of AddIndexer for a name
// the store already indexes.
var ErrIndexExists = errors.New("cache: index already exists")

// AddIndexer adds the index name, computed by fn, and indexes the objects
// already stored, so an index can be added to a running informer's store.
func (s *Store[T]) AddIndexer(name string, fn IndexFunc[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.indexers[name]; ok {
		return fmt.Errorf("%w: %q", ErrIndexExists, name)
	}
	s.indexers[name] = fn
	idx := map[string]map[string]struct{}{}
	for key, obj := range s.items {
		addToIndex(idx, key, fn(obj))
	}
	s.indices[name] = idx
	return nil
}

// Get returns the object stored under key (see KeyOf).
func (s *Store[T]) Get(key string) (T, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	obj, ok := s.items[key]
	return obj, ok
}

// List returns all stored objects, sorted by key.
func (s *Store[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sorted(func(yield func(string) bool) {
		for k := range s.items {
			if !yield(k) {
				return
			}
		}
	})
}

// Keys returns the keys of all stored objects, sorted.
func (s *Store[T]) Keys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]string, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Len returns the number of stored objects.
func (s *Store[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// ByIndex returns the objects whose index named index has value, sorted by key.
func (s *Store[T]) ByIndex(index, value string) ([]T, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	idx, ok := s.indices[index]
	if !ok {
		return nil, fmt.Errorf("cache: no index named %q", index)
	}
	keys := idx[value]
	return s.sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}), nil
}

// ResourceVersion returns the resourceVersion given to the last Replace or
// SetResourceVersion.
func (s *Store[T]) ResourceVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rv
}

// SetResourceVersion records rv as the version the store is current at.
func (s *Store[T]) SetResourceVersion(rv string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv = rv
}

// Upsert adds or replaces obj and returns the object it replaced, if any.
func (s *Store[T]) Upsert(obj T) (old T, existed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.upsert(obj)
}

// Delete removes the object stored under key and returns it, if any.
func (s *Store[T]) Delete(key string) (old T, existed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delete(key)
}

// Replace atomically replaces the whole content with items, records rv, and
// returns the changes it made as events, in key order: Added for new keys,
// Updated (with Old) for keys whose resourceVersion changed, Deleted (carrying
// the last stored object) for keys no longer present. Unchanged objects yield
// no event.
func (s *Store[T]) Replace(items []T, rv string) []Event[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	var events []Event[T]
	seen := make(map[string]struct{}, len(items))
	for _, obj := range items {
		key := KeyOf(obj)
		seen[key] = struct{}{}
		old, existed := s.upsert(obj)
		switch {
		case !existed:
			events = append(events, Event[T]{Type: Added, Object: obj})
		case old.GetResourceVersion() != obj.GetResourceVersion():
			events = append(events, Event[T]{Type: Updated, Object: obj, Old: old})
		}
	}
	var gone []string
	for key := range s.items {
		if _, ok := seen[key]; !ok {
			gone = append(gone, key)
		}
	}
	slices.Sort(gone)
	for _, key := range gone {
		old, _ := s.delete(key)
		events = append(events, Event[T]{Type: Deleted, Object: old})
	}
	s.rv = rv
	slices.SortStableFunc(events, func(a, b Event[T]) int {
		ka, kb := KeyOf(a.Object), KeyOf(b.Object)
		switch {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return 0
	})
	return events
}

// upsert requires s.mu held for writing.
func (s *Store[T]) upsert(obj T) (old T, existed bool) {
	key := KeyOf(obj)
	old, existed = s.items[key]
	if existed {
		s.unindex(key, old)
	}
	s.items[key] = obj
	for name, fn := range s.indexers {
		addToIndex(s.indices[name], key, fn(obj))
	}
	return old, existed
}

// addToIndex adds key under each of values in idx.
func addToIndex(idx map[string]map[string]struct{}, key string, values []string) {
	for _, v := range values {
		set := idx[v]
		if set == nil {
			set = map[string]struct{}{}
			idx[v] = set
		}
		set[key] = struct{}{}
	}
}

// delete requires s.mu held for writing.
func (s *Store[T]) delete(key string) (old T, existed bool) {
	old, existed = s.items[key]
	if existed {
		s.unindex(key, old)
		delete(s.items, key)
	}
	return old, existed
}

// unindex requires s.mu held for writing.
func (s *Store[T]) unindex(key string, obj T) {
	for name, fn := range s.indexers {
		idx := s.indices[name]
		for _, v := range fn(obj) {
			if set := idx[v]; set != nil {
				delete(set, key)
				if len(set) == 0 {
					delete(idx, v)
				}
			}
		}
	}
}

// sorted requires s.mu held; it returns the objects of keys in key order.
func (s *Store[T]) sorted(keys func(func(string) bool)) []T {
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	out := make([]T, 0, len(ks))
	for _, k := range ks {
		out = append(out, s.items[k])
	}
	return out
}
