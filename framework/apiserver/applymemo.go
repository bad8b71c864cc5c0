package apiserver

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// applyMemoSize bounds the objects whose last unchanged apply is remembered.
const applyMemoSize = 4096

// admissionConfigPrefixes are the storage prefixes whose changes can change
// what admission decides on an update: the admission configuration
// (webhooks, admission policies and their bindings) and namespaces (their
// labels select webhooks and policies).
var admissionConfigPrefixes = []string{"/registry/admissionregistration.k8s.io/", "/registry/core/namespaces/"}

// applyMemo remembers, per object, the last server-side apply that left the
// object as it was: the digest of the request's inputs, the resourceVersion
// it found (and left) and the admission generation it ran under. Applying
// the same configuration by the same manager to the object an apply left
// unchanged leaves it unchanged again (apply is idempotent; the object's
// strategy and storage are deterministic), so an apply with the same digest
// on an object still at that resourceVersion, under the same admission
// generation, commits nothing and answers the stored object. Bounded: least
// recently used entries go first.
type applyMemo struct {
	// epoch is bumped by Server.AdmissionChanged.
	epoch atomic.Int64
	// caches are the started watch caches under admissionConfigPrefixes.
	caches atomic.Pointer[[]*watchCache]

	mu      sync.Mutex
	entries map[string]*list.Element // storage key → element holding *memoEntry
	lru     list.List                // front: most recently used
}

type memoEntry struct {
	key    string
	digest [sha256.Size]byte
	rv     int64
	gen    int64
}

func (m *applyMemo) lookup(key string, digest [sha256.Size]byte, rv, gen int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.entries[key]
	if !ok {
		return false
	}
	e := el.Value.(*memoEntry)
	if e.digest != digest || e.rv != rv || e.gen != gen {
		return false
	}
	m.lru.MoveToFront(el)
	return true
}

func (m *applyMemo) remember(key string, digest [sha256.Size]byte, rv, gen int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[string]*list.Element{}
	}
	if el, ok := m.entries[key]; ok {
		*el.Value.(*memoEntry) = memoEntry{key: key, digest: digest, rv: rv, gen: gen}
		m.lru.MoveToFront(el)
		return
	}
	m.entries[key] = m.lru.PushFront(&memoEntry{key: key, digest: digest, rv: rv, gen: gen})
	for m.lru.Len() > applyMemoSize {
		last := m.lru.Back()
		delete(m.entries, last.Value.(*memoEntry).key)
		m.lru.Remove(last)
	}
}

func (m *applyMemo) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entries = nil
	m.lru.Init()
}

// AdmissionChanged tells the server that what admission decides may have
// changed (a plugin's configuration outside the admissionregistration.k8s.io
// resources and namespaces, which the server follows itself): applies
// remembered as changing nothing run in full again.
func (s *Server) AdmissionChanged() { s.applies.epoch.Add(1) }

// admissionGeneration changes whenever the admission configuration may
// have: AdmissionChanged, or a change to an object under
// admissionConfigPrefixes (as the watch caches, which admission reads, see it).
func (s *Server) admissionGeneration() int64 {
	gen := s.applies.epoch.Load()
	for _, p := range s.admissionCaches() {
		gen += p.generation()
	}
	return gen
}

// admissionCaches returns the started watch caches under
// admissionConfigPrefixes.
func (s *Server) admissionCaches() []*watchCache {
	if p := s.applies.caches.Load(); p != nil {
		return *p
	}
	return nil
}

// refreshAdmissionCachesLocked recomputes admissionCaches after the set of
// started caches changed. Called with mu held.
func (s *Server) refreshAdmissionCachesLocked() {
	var out []*watchCache
	for prefix, h := range s.caches {
		if isAdmissionConfig(prefix) {
			out = append(out, h.cache)
		}
	}
	s.applies.caches.Store(&out)
}

// isAdmissionConfig reports whether a storage prefix is under
// admissionConfigPrefixes.
func isAdmissionConfig(prefix string) bool {
	for _, p := range admissionConfigPrefixes {
		if strings.HasPrefix(prefix, p) {
			return true
		}
	}
	return false
}

// applyDigest hashes what an apply's result depends on besides the object:
// who applies what, how, and through which resource.
func applyDigest(ctx context.Context, q *request, mode updateMode, body []byte) [sha256.Size]byte {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(q.res.GroupVersionResource().String())
	field(q.ri.subresource)
	field(string(rune('0' + mode)))
	field(q.query.Get("fieldManager"))
	field(q.query.Get("force"))
	field(q.query.Get("fieldValidation"))
	field(q.r.Header.Get("Content-Type"))
	if u, ok := filters.UserFrom(ctx); ok && u != nil {
		field(u.Name)
		field(u.UID)
		for _, g := range u.Groups {
			field(g)
		}
		keys := make([]string, 0, len(u.Extra))
		for k := range u.Extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			field(k)
			for _, v := range u.Extra[k] {
				field(v)
			}
		}
	}
	h.Write(body)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// memoizable reports whether an apply may be answered from, or recorded in,
// the memo: no dry run (never remembered), no Table, and no mutating
// admission plugin that could change the object.
func (s *Server) memoizable(ctx context.Context, q *request) bool {
	if q.dryRun() || acceptsTable(q.r) {
		return false
	}
	if !s.admissionEnabled() {
		return true
	}
	a := s.admissionAttributes(ctx, q, admissionchain.Update, q.ri.name, nil, nil)
	return !s.opts.Security.Admission.MayMutate(ctx, a)
}

// appliedBefore answers an apply from the memo when it applies what was last
// applied, unchanged, to the object still at that resourceVersion: it
// commits nothing and answers the stored object as a GET does. It reports
// whether it answered.
func (s *Server) appliedBefore(q *request, key string, digest [sha256.Size]byte, gen int64) bool {
	kv, err := s.opts.Storage.Get(q.ctx(), key)
	if err != nil || kv.Stale || !s.applies.lookup(key, digest, kv.ModRevision, gen) {
		return false
	}
	return s.writeStored(q, kv) == nil
}

// rememberUnchanged records that an apply with digest left the object at rv.
func (s *Server) rememberUnchanged(key string, digest [sha256.Size]byte, rv, gen int64) {
	s.applies.remember(key, digest, rv, gen)
}
