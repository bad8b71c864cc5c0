package encryption

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/storage"
	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
	"github.com/converge-dev/converge/framework/storage/storagetest"
)

// under puts every key of the conformance suite below /registry/g/r, where
// the encryption store encrypts it, and takes the root off again on the way
// back.
type under struct {
	inner storage.Interface
}

const root = "/registry/g/r"

func (u under) kv(kv storage.KeyValue) storage.KeyValue {
	kv.Key = strings.TrimPrefix(kv.Key, root)
	return kv
}

func (u under) Get(ctx context.Context, key string) (storage.KeyValue, error) {
	kv, err := u.inner.Get(ctx, root+key)
	return u.kv(kv), err
}

func (u under) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return u.inner.Create(ctx, root+key, value)
}

func (u under) Update(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	return u.inner.Update(ctx, root+key, value, expected)
}

func (u under) Delete(ctx context.Context, key string, expected int64) (storage.KeyValue, int64, error) {
	kv, rev, err := u.inner.Delete(ctx, root+key, expected)
	return u.kv(kv), rev, err
}

func (u under) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	if opts.StartKey != "" {
		opts.StartKey = root + opts.StartKey
	}
	res, err := u.inner.List(ctx, root+prefix, opts)
	for i := range res.Items {
		res.Items[i] = u.kv(res.Items[i])
	}
	return res, err
}

func (u under) Count(ctx context.Context, prefix string) (int64, error) {
	return u.inner.Count(ctx, root+prefix)
}

func (u under) Watch(ctx context.Context, prefix string, from int64) <-chan storage.Event {
	in := u.inner.Watch(ctx, root+prefix, from)
	out := make(chan storage.Event)
	go func() {
		defer close(out)
		for e := range in {
			e.KV = u.kv(e.KV)
			if e.Prev != nil {
				p := u.kv(*e.Prev)
				e.Prev = &p
			}
			select {
			case out <- e:
			case <-ctx.Done():
				for range in {
				}
				return
			}
		}
	}()
	return out
}

func (u under) CurrentRevision(ctx context.Context) (int64, error) {
	return u.inner.CurrentRevision(ctx)
}

func (u under) Compact(ctx context.Context, rev int64) error { return u.inner.Compact(ctx, rev) }

// TestConformance runs the storage contract suite through the encryption
// store (every value encrypted) on a real etcd, and checks the values really
// are encrypted there.
func TestConformance(t *testing.T) {
	e, err := etcdstore.StartEmbedded(t.Context(), etcdstore.EmbeddedOptions{Dir: t.TempDir(), NoFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	raw := etcdstore.New(e.Client())
	cfg, err := FromKeys([]string{"k=" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))}, "*.*")
	if err != nil {
		t.Fatal(err)
	}
	enc, err := Wrap(raw, cfg)
	if err != nil {
		t.Fatal(err)
	}
	storagetest.RunConformance(t, func(*testing.T) storage.Interface { return under{inner: enc} })

	res, err := raw.List(t.Context(), root+"/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) == 0 {
		t.Fatal("the suite left no keys to check")
	}
	for _, kv := range res.Items {
		if !strings.HasPrefix(string(kv.Value), "k8s:enc:aesgcm:v1:k:") {
			t.Fatalf("%s stored as %q", kv.Key, kv.Value)
		}
	}
}
