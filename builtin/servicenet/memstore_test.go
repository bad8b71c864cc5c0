package servicenet

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/converge-dev/converge/framework/storage"
)

// memStore is an in-memory Store with etcd's create-if-absent and
// compare-and-delete semantics.
type memStore struct {
	mu  sync.Mutex
	rev int64
	kvs map[string]storage.KeyValue
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{kvs: map[string]storage.KeyValue{}} }

func (m *memStore) Get(_ context.Context, key string) (storage.KeyValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kv, ok := m.kvs[key]
	if !ok {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return kv, nil
}

func (m *memStore) Create(_ context.Context, key string, value []byte) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.kvs[key]; ok {
		return 0, storage.ErrExists
	}
	m.rev++
	m.kvs[key] = storage.KeyValue{Key: key, Value: slices.Clone(value), CreateRevision: m.rev, ModRevision: m.rev}
	return m.rev, nil
}

func (m *memStore) Delete(_ context.Context, key string, expected int64) (storage.KeyValue, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kv, ok := m.kvs[key]
	if !ok {
		return storage.KeyValue{}, 0, storage.ErrNotFound
	}
	if expected != 0 && kv.ModRevision != expected {
		return storage.KeyValue{}, 0, storage.ErrConflict
	}
	m.rev++
	delete(m.kvs, key)
	return kv, m.rev, nil
}

func (m *memStore) List(_ context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.kvs {
		if strings.HasPrefix(k, prefix) && k >= opts.StartKey {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	res := storage.ListResult{Revision: m.rev}
	for i, k := range keys {
		if opts.Limit > 0 && int64(i) == opts.Limit {
			res.More = true
			break
		}
		res.Items = append(res.Items, m.kvs[k])
	}
	return res, nil
}

func (m *memStore) keys(prefix string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.kvs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func (m *memStore) put(key string, value []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rev++
	m.kvs[key] = storage.KeyValue{Key: key, Value: value, CreateRevision: m.rev, ModRevision: m.rev}
}
