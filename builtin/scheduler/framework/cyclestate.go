package framework

import (
	"errors"
	"fmt"
	"sync"
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
// for concurrent use.
type CycleState struct {
	storage sync.Map // StateKey -> StateData
	// skipFilter and skipScore are the plugins whose PreFilter/PreScore returned
	// Skip; written only by the runtime before Filter/Score start.
	skipFilter map[string]struct{}
	skipScore  map[string]struct{}
}

// NewCycleState returns an empty state.
func NewCycleState() *CycleState { return &CycleState{} }

// Read returns the value for key or ErrNotFound.
func (c *CycleState) Read(key StateKey) (StateData, error) {
	if v, ok := c.storage.Load(key); ok {
		return v.(StateData), nil
	}
	return nil, ErrNotFound
}

// Write stores a value.
func (c *CycleState) Write(key StateKey, val StateData) { c.storage.Store(key, val) }

// Delete removes a value.
func (c *CycleState) Delete(key StateKey) { c.storage.Delete(key) }

// Clone returns a copy whose values are cloned.
func (c *CycleState) Clone() *CycleState {
	if c == nil {
		return nil
	}
	n := NewCycleState()
	c.storage.Range(func(k, v any) bool {
		n.storage.Store(k, v.(StateData).Clone())
		return true
	})
	n.skipFilter = c.skipFilter
	n.skipScore = c.skipScore
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
