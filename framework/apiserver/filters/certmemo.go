package filters

import (
	"crypto/x509"
	"runtime"
	"sync"
	"weak"
)

// CertMemo remembers a value per parsed TLS client certificate, for as long
// as that certificate lives. A connection's requests share one parsed
// certificate, so the value is found by pointer, without hashing the
// certificate, and held weakly: it is forgotten once the connection (its
// parsed certificate) is gone. Authenticators use it to verify a connection's
// certificate once, not on every request. The zero value is ready to use.
type CertMemo[V any] struct {
	m sync.Map // weak.Pointer[x509.Certificate] → V
}

// Get returns the value remembered for leaf.
func (c *CertMemo[V]) Get(leaf *x509.Certificate) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	v, ok := c.m.Load(weak.Make(leaf))
	if !ok {
		return zero, false
	}
	return v.(V), true
}

// Put remembers v for leaf.
func (c *CertMemo[V]) Put(leaf *x509.Certificate, v V) {
	if c == nil {
		return
	}
	key := weak.Make(leaf)
	if _, loaded := c.m.Swap(key, v); !loaded {
		runtime.AddCleanup(leaf, func(k weak.Pointer[x509.Certificate]) { c.m.Delete(k) }, key)
	}
}

// Len is the number of certificates remembered.
func (c *CertMemo[V]) Len() int {
	n := 0
	c.m.Range(func(any, any) bool { n++; return true })
	return n
}
