package cache_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/storage"
	"github.com/converge-dev/converge/testenv"
)

// cutLW delegates to a ListerWatcher that can be cut off: disconnect ends the
// current watch and fails every list and watch until reconnect supplies the
// ListerWatcher of a (possibly restarted) server. It records what the server
// answered.
type cutLW struct {
	mu     sync.Mutex
	lw     cache.ListerWatcher[CM]
	cut    bool
	cancel context.CancelFunc // ends the current watch
	lists  []string           // resourceVersion asked by each list that succeeded
	gone   atomic.Int32       // watches the server refused with 410 Gone / Expired
	// refused counts the lists and watches failed with errCut. The reflector
	// asks again only after the cancelled watch has ended and its events are
	// handled, so refused > 0 means nothing more arrives from before the cut:
	// cancelling an HTTP/2 stream is asynchronous, and an event the server
	// sends meanwhile can still be read.
	refused atomic.Int32
}

var errCut = errors.New("test: disconnected")

func (c *cutLW) disconnect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	if c.cancel != nil {
		c.cancel()
	}
}

func (c *cutLW) reconnect(lw cache.ListerWatcher[CM]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lw, c.cut = lw, false
}

func (c *cutLW) listed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lists...)
}

func (c *cutLW) List(ctx context.Context, opts ...client.ListOption) ([]CM, string, error) {
	c.mu.Lock()
	lw, cut := c.lw, c.cut
	c.mu.Unlock()
	if cut {
		c.refused.Add(1)
		return nil, "", errCut
	}
	items, rv, err := lw.List(ctx, opts...)
	if err == nil {
		var lo client.ListOptions
		for _, o := range opts {
			o.ApplyToList(&lo)
		}
		c.mu.Lock()
		c.lists = append(c.lists, lo.ResourceVersion)
		c.mu.Unlock()
	}
	return items, rv, err
}

func (c *cutLW) Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		c.refused.Add(1)
		return nil, errCut
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := c.lw.Watch(wctx, opts...)
	if err != nil {
		cancel()
		if apierrors.IsGone(err) || apierrors.IsResourceExpired(err) {
			c.gone.Add(1)
		}
		return nil, err
	}
	c.cancel = cancel
	return cancelWatcher{w, cancel}, nil
}

type cancelWatcher struct {
	client.Watcher
	cancel context.CancelFunc
}

func (w cancelWatcher) Stop() {
	w.Watcher.Stop()
	w.cancel()
}

// TestRelistAfterCompaction cuts an informer off the API server, changes and
// deletes objects, compacts etcd past the informer's resourceVersion and
// restarts the API server, so that its watch cache no longer reaches back
// either: the real server answers the informer's watch with 410, and the
// informer relists and turns the difference into events. The delete it missed
// arrives as a Deleted event carrying the last object it knew.
//
// Compaction alone does not make a running server answer 410: its watch cache
// keeps the last 4096 events of each resource whatever etcd keeps, as
// kube-apiserver's does; the restart empties that history.
func TestRelistAfterCompaction(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	env1, err := testenv.Start(ctx, testenv.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c1 := clientFor(t, env1)
	for _, name := range []string{"keep", "gone", "changed"} {
		if err := c1.Create(ctx, configMap("default", name, nil)); err != nil {
			t.Fatal(err)
		}
	}
	lw1, err := cache.NewClientListWatch[CM](c1)
	if err != nil {
		t.Fatal(err)
	}
	clw := &cutLW{lw: lw1}
	inf := cache.NewInformer[CM](clw, cache.InformerOptions[CM]{Namespace: "default"})
	var rec recorder
	inf.AddHandler(rec.handle)
	start(t, inf)
	eventually(t, "initial adds", func() bool { return len(rec.snapshot()) == 3 })
	lastKnownGone, _ := inf.Store().Get("default/gone")
	lastKnownChanged, _ := inf.Store().Get("default/changed")

	clw.disconnect()
	eventually(t, "the informer to notice the cut", func() bool { return clw.refused.Load() > 0 })
	// While cut off: change "gone" and then delete it (so its final state on the
	// server is not the one the informer knew), change "changed", create "new".
	gone := configMap("default", "gone", nil)
	gone.ResourceVersion = lastKnownGone.ResourceVersion
	gone.Data = map[string]string{"k": "changed before the delete"}
	if err := c1.Update(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if err := c1.Delete(ctx, gone); err != nil {
		t.Fatal(err)
	}
	changed := configMap("default", "changed", nil)
	changed.ResourceVersion = lastKnownChanged.ResourceVersion
	changed.Data = map[string]string{"k": "v2"}
	if err := c1.Update(ctx, changed); err != nil {
		t.Fatal(err)
	}
	if err := c1.Create(ctx, configMap("default", "new", nil)); err != nil {
		t.Fatal(err)
	}

	store := env1.ControlPlane.Storage()
	rev, err := store.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	informerRV, err := strconv.ParseInt(inf.Store().ResourceVersion(), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if informerRV >= rev {
		t.Fatalf("informer at %d, not behind the compaction at %d", informerRV, rev)
	}
	if _, err := store.List(ctx, "/", storage.ListOptions{Revision: informerRV}); !errors.Is(err, storage.ErrCompacted) {
		t.Fatalf("reading at the informer's revision %d after compaction: %v, want ErrCompacted", informerRV, err)
	}

	if err := env1.Stop(); err != nil {
		t.Fatal(err)
	}
	c1.REST().CloseIdleConnections()
	env2 := testenv.StartT(t, testenv.Options{Dir: dir})
	lw2, err := cache.NewClientListWatch[CM](clientFor(t, env2))
	if err != nil {
		t.Fatal(err)
	}
	clw.reconnect(lw2)

	eventually(t, "the store to match the server", func() bool {
		return cmp.Equal(inf.Store().Keys(), []string{"default/changed", "default/keep", "default/new"}) &&
			len(rec.snapshot()) >= 6
	})
	if n := clw.gone.Load(); n == 0 {
		t.Error("the server never answered 410: the informer resumed instead of relisting")
	}
	if lists := clw.listed(); len(lists) != 2 || lists[1] != "" {
		t.Errorf("lists asked resourceVersions %q, want an initial list then one consistent relist (\"\")", lists)
	}

	after := rec.snapshot()[3:]
	perKey := map[string][]string{}
	for _, ev := range after {
		perKey[cache.KeyOf(ev.Object)] = append(perKey[cache.KeyOf(ev.Object)], string(ev.Type))
	}
	if diff := cmp.Diff(map[string][]string{
		"default/gone":    {string(cache.Deleted)},
		"default/changed": {string(cache.Updated)},
		"default/new":     {string(cache.Added)},
	}, perKey); diff != "" {
		t.Fatalf("events after the relist (-want +got):\n%s", diff)
	}
	for _, ev := range after {
		switch cache.KeyOf(ev.Object) {
		case "default/gone":
			if ev.Object.ResourceVersion != lastKnownGone.ResourceVersion || ev.Object.Data["k"] != "v" {
				t.Errorf("Deleted carries %s (rv %s), want the last known object (rv %s)",
					fmt.Sprint(ev.Object.Data), ev.Object.ResourceVersion, lastKnownGone.ResourceVersion)
			}
		case "default/changed":
			if ev.Old == nil || ev.Old.ResourceVersion != lastKnownChanged.ResourceVersion || ev.Object.Data["k"] != "v2" {
				t.Errorf("Updated = %v (old %v), want v2 over the last known object", ev.Object.Data, ev.Old)
			}
		}
	}
}
