package podutil

import (
	"sync"
	"time"
)

// ExpectationsTTL is how long expectations are trusted: after it, an owner is
// synced again even if some observations never arrived (a lost watch event must
// not block its owner forever).
const ExpectationsTTL = 5 * time.Minute

// Expectations remembers, per owner key, how many creations and deletions the
// controller issued and has not yet observed through its informer. While an
// owner has pending expectations its controller must not compute a new diff
// from the cache, which may not show its own writes yet: that is what keeps a
// slow cache from causing double creations or deletions.
//
// The informer's handlers call CreationObserved / DeletionObserved; the
// reconciler calls Satisfied before acting and Expect* before writing. It is
// safe for concurrent use.
type Expectations struct {
	now func() time.Time

	mu sync.Mutex
	m  map[string]*expectation // guarded by mu
}

type expectation struct {
	add int
	del map[string]struct{} // keys of the objects expected to go
	at  time.Time
}

// NewExpectations returns an empty set using now as the clock (time.Now if nil).
func NewExpectations(now func() time.Time) *Expectations {
	if now == nil {
		now = time.Now
	}
	return &Expectations{now: now, m: map[string]*expectation{}}
}

// Satisfied reports whether key has no pending creations or deletions, or
// its expectations have expired, or it has none recorded.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	if x.add <= 0 && len(x.del) == 0 {
		return true
	}
	return e.now().Sub(x.at) > ExpectationsTTL
}

// Expect records add creations and the deletion of the objects named by
// delKeys for key, replacing what was recorded before.
func (e *Expectations) Expect(key string, add int, delKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{add: add, del: make(map[string]struct{}, len(delKeys)), at: e.now()}
	for _, k := range delKeys {
		x.del[k] = struct{}{}
	}
	e.m[key] = x
}

// CreationObserved lowers key's pending creations by one.
func (e *Expectations) CreationObserved(key string) { e.LowerCreations(key, 1) }

// LowerCreations lowers key's pending creations by n, for creations that
// failed or were skipped.
func (e *Expectations) LowerCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		x.add -= n
	}
}

// DeletionObserved marks the deletion of the object objKey as done for key
// (seen going, or its deletion failed).
func (e *Expectations) DeletionObserved(key, objKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		delete(x.del, objKey)
	}
}

// Pending returns key's pending creations and deletions.
func (e *Expectations) Pending(key string) (add, del int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		return x.add, len(x.del)
	}
	return 0, 0
}

// Forget drops key's expectations (its owner is gone).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
