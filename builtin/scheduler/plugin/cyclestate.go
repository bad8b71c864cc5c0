package plugin

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// ErrNotFound is returned by CycleState.Read for a missing key.
var ErrNotFound = errors.New("framework: not found")

// StateKey names a value in CycleState; use the plugin name as a prefix.
type StateKey string

// StateData is a value stored in CycleState. Clone is used when the
// preemption logic copies the state to simulate removing pods; a value that is
// never modified after PreFilter may return itself.
type StateData interface {
	Clone() StateData
}

// CycleState is the typed key/value store of one scheduling cycle. Plugins
// write in PreFilter/PreScore and read in Filter/Score; all methods are safe
// for concurrent use. Reads, which happen once per plugin and node, are a
// lock-free scan of a small copy-on-write list; writes copy the list.
type CycleState struct {
	// mu serialises writers.
	mu      sync.Mutex
	entries atomic.Pointer[[]stateEntry]
	// skipFilter and skipScore are the plugins whose PreFilter/PreScore returned
	// Skip; written only by the runtime before Filter/Score start.
	skipFilter map[string]struct{}
	skipScore  map[string]struct{}
	// filterPlugins are the Filter plugins that run this cycle (set by the
	// runtime after PreFilter, nil until then).
	filterPlugins []FilterPlugin
	// podInfo is the scheduled pod's PodInfo (see PodInfoFor).
	podInfo *PodInfo
}

// SetPodInfo records the PodInfo of the pod being scheduled, computed when it
// was queued; for the scheduler, before PreFilter. It must not change during
// the cycle.
func (c *CycleState) SetPodInfo(pi *PodInfo) { c.podInfo = pi }

type stateEntry struct {
	key StateKey
	val StateData
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState { return &CycleState{} }

// Read returns the value for key or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if p := c.entries.Load(); p != nil {
		for i := range *p {
			if (*p)[i].key == key {
				return (*p)[i].val, nil
			}
		}
	}
	return nil, ErrNotFound
}

// Write stores a value.
func (c *CycleState) Write(key StateKey, val StateData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var old []stateEntry
	if p := c.entries.Load(); p != nil {
		old = *p
	}
	n := make([]stateEntry, len(old), len(old)+1)
	copy(n, old)
	for i := range n {
		if n[i].key == key {
			n[i].val = val
			c.entries.Store(&n)
			return
		}
	}
	n = append(n, stateEntry{key, val})
	c.entries.Store(&n)
}

// Delete removes a value.
func (c *CycleState) Delete(key StateKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.entries.Load()
	if p == nil {
		return
	}
	n := make([]stateEntry, 0, len(*p))
	for _, e := range *p {
		if e.key != key {
			n = append(n, e)
		}
	}
	c.entries.Store(&n)
}

// Clone returns a copy whose values are cloned.
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	n := NewCycleState()
	if p := c.entries.Load(); p != nil {
		entries := make([]stateEntry, len(*p))
		for i, e := range *p {
			entries[i] = stateEntry{e.key, e.val.Clone()}
		}
		n.entries.Store(&entries)
	}
	n.skipFilter = c.skipFilter
	n.skipScore = c.skipScore
	n.filterPlugins = c.filterPlugins
	n.podInfo = c.podInfo
	return n
}

// SkipFilter reports whether the plugin's Filter is skipped this cycle.
func (c *CycleState) SkipFilter(plugin string) bool {
	_, ok := c.skipFilter[plugin]
	return ok
}

// SkipScore reports whether the plugin's Score is skipped this cycle.
func (c *CycleState) SkipScore(plugin string) bool {
	_, ok := c.skipScore[plugin]
	return ok
}

// SetSkipFilter records the plugins whose Filter is skipped; for the runtime.
func (c *CycleState) SetSkipFilter(plugins map[string]struct{}) { c.skipFilter = plugins }

// SetFilterPlugins records the Filter plugins that run this cycle (the
// configured ones minus the skipped ones); for the runtime.
func (c *CycleState) SetFilterPlugins(plugins []FilterPlugin) { c.filterPlugins = plugins }

// FilterPlugins returns what SetFilterPlugins recorded; ok is false before.
func (c *CycleState) FilterPlugins() (plugins []FilterPlugin, ok bool) {
	return c.filterPlugins, c.filterPlugins != nil
}

// SetSkipScore records the plugins whose Score is skipped; for the runtime.
func (c *CycleState) SetSkipScore(plugins map[string]struct{}) { c.skipScore = plugins }

// ReadState reads key and asserts its type.
func ReadState[T StateData](c *CycleState, key StateKey) (T, error) {
	var zero T
	v, err := c.Read(key)
	if err != nil {
		return zero, fmt.Errorf("read %q from cycle state: %w", key, err)
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("cycle state %q has type %T, want %T", key, v, zero)
	}
	return t, nil
}
