package sharedmaps

import (
	"hash/maphash"
	"maps"
	"sync"
)

// DefaultSize is the number of maps a Table remembers when NewTable is given 0.
const DefaultSize = 1024

// Table remembers maps by content, up to a size; when full it starts over
// (the maps already handed out stay shared). It is safe for concurrent use.
type Table struct {
	seed maphash.Seed
	size int

	mu   sync.Mutex
	sets map[uint64]map[string]string
}

// NewTable returns a Table of size maps (DefaultSize when size <= 0).
func NewTable(size int) *Table {
	if size <= 0 {
		size = DefaultSize
	}
	return &Table{seed: maphash.MakeSeed(), size: size, sets: map[uint64]map[string]string{}}
}

// Share returns a map equal to m that the table handed out before, or else
// remembers and returns prepare(m) (m itself when prepare is nil; prepare
// may build an equal map, e.g. with interned strings). nil stays nil.
func (t *Table) Share(m map[string]string, prepare func(map[string]string) map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	// The sum of the entries' hashes does not depend on iteration order.
	h := uint64(len(m))
	for k, v := range m {
		h += maphash.String(t.seed, k) ^ (maphash.String(t.seed, v) * 31)
	}
	t.mu.Lock()
	old, ok := t.sets[h]
	t.mu.Unlock()
	if ok && maps.Equal(old, m) {
		return old
	}
	if prepare != nil {
		m = prepare(m)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.sets) >= t.size {
		clear(t.sets)
	}
	t.sets[h] = m
	return m
}
