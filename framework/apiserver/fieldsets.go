package apiserver

import (
	"hash/maphash"
	"maps"
	"sync"
)

// maxFieldSets bounds a fieldSets table; when full it starts over (objects
// keep the maps they were given).
const maxFieldSets = 1024

// fieldSets lets a watch cache's objects share their labels and selectable
// fields maps: the objects of one workload have equal labels, and without
// metadata.name (objectFields) the selectable fields of most pods in a
// namespace are equal too. Two maps per object were ≈800 bytes of every
// cached pod. The shared maps are never written after they are built.
type fieldSets struct {
	seed maphash.Seed

	mu   sync.Mutex
	sets map[uint64]map[string]string
}

func newFieldSets() *fieldSets {
	return &fieldSets{seed: maphash.MakeSeed(), sets: map[uint64]map[string]string{}}
}

// share replaces o's labels and fields with equal maps seen before.
func (s *fieldSets) share(o *cachedObject) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o.labels = s.intern(o.labels)
	o.fields = s.intern(o.fields)
}

// intern returns a map equal to m seen before, or remembers m. Called with mu held.
func (s *fieldSets) intern(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	// The sum of the entries' hashes does not depend on iteration order.
	h := uint64(len(m))
	for k, v := range m {
		h += maphash.String(s.seed, k) ^ (maphash.String(s.seed, v) * 31)
	}
	if old, ok := s.sets[h]; ok && maps.Equal(old, m) {
		return old
	}
	if len(s.sets) >= maxFieldSets {
		clear(s.sets)
	}
	s.sets[h] = m
	return m
}
