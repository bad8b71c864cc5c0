package cache_test

import (
	"context"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

func TestSharedInformers(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if err := c.Create(ctx, configMap("default", "shared", nil)); err != nil {
		t.Fatal(err)
	}
	f := cache.NewSharedInformers(c)
	a, err := cache.InformerFor(f, cache.InformerOptions[CM]{})
	if err != nil {
		t.Fatal(err)
	}
	run(t, f)
	b, err := cache.InformerFor(f, cache.InformerOptions[CM]{Namespace: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatal("InformerFor returned two informers for one kind")
	}
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if !f.WaitForCacheSync(sctx) {
		t.Fatal("no sync")
	}
	if _, ok := a.Store().Get("default/shared"); !ok {
		t.Fatal("object missing")
	}
	f.Stop(corev1.GroupVersion().WithKind("ConfigMap"))
	if a.HasSynced() {
		t.Error("stopped informer still synced")
	}
	c2, err := cache.InformerFor(f, cache.InformerOptions[CM]{})
	if err != nil {
		t.Fatal(err)
	}
	if c2 == a {
		t.Error("Stop did not forget the informer")
	}
	if !c2.WaitForCacheSync(sctx) {
		t.Fatal("informer created after Start did not start")
	}
}

// run starts f until the test ends.
func run(t *testing.T, f *cache.SharedInformers) { runUntilEnd(t, f.Start) }

func TestSharedInformersDefaultTransform(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if err := c.Create(ctx, configMap("default", "stripped", nil)); err != nil {
		t.Fatal(err)
	}
	var live corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "stripped"}, &live); err != nil {
		t.Fatal(err)
	}
	if len(live.ManagedFields) == 0 {
		t.Fatal("the server recorded no managedFields: nothing to strip")
	}
	f := cache.NewSharedInformersWithOptions(c, cache.SharedOptions{DefaultTransform: cache.StripManagedFields})
	cms, err := cache.InformerFor(f, cache.InformerOptions[CM]{})
	if err != nil {
		t.Fatal(err)
	}
	// An informer with a Transform of its own keeps it.
	g := cache.NewSharedInformersWithOptions(c, cache.SharedOptions{DefaultTransform: cache.StripManagedFields})
	own := 0
	withOwn, err := cache.InformerFor(g, cache.InformerOptions[CM]{Transform: func(cm CM) CM { own++; return cm }})
	if err != nil {
		t.Fatal(err)
	}
	run(t, f)
	run(t, g)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if !f.WaitForCacheSync(sctx) || !g.WaitForCacheSync(sctx) {
		t.Fatal("no sync")
	}
	cm, ok := cms.Store().Get("default/stripped")
	if !ok {
		t.Fatal("object missing")
	}
	if cm.ManagedFields != nil || cm.Data["k"] != "v" {
		t.Errorf("cached %+v, want the object without managedFields", cm)
	}
	if kept, ok := withOwn.Store().Get("default/stripped"); !ok || own == 0 || len(kept.ManagedFields) == 0 {
		t.Errorf("cached %v with its own Transform called %d times, want the object with managedFields", ok, own)
	}
	u := &api.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "managedFields": []any{}}}}
	if _, has := cache.StripManagedFields(u).(*api.Unstructured).Object["metadata"].(map[string]any)["managedFields"]; has {
		t.Error("StripManagedFields kept an unstructured object's managedFields")
	}
}

func TestShareInformer(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if err := c.Create(ctx, configMap("default", "one", nil)); err != nil {
		t.Fatal(err)
	}
	owner := cache.NewSharedInformers(c)
	inf, err := cache.InformerFor(owner, cache.InformerOptions[CM]{})
	if err != nil {
		t.Fatal(err)
	}
	borrower := cache.NewSharedInformers(c)
	if err := cache.Share(borrower, inf); err != nil {
		t.Fatal(err)
	}
	if err := cache.Share(borrower, inf); err == nil {
		t.Error("a second Share of one kind succeeded")
	}
	got, err := cache.InformerFor(borrower, cache.InformerOptions[CM]{})
	if err != nil || got != inf {
		t.Fatalf("InformerFor = %p, %v, want the shared informer %p", got, err, inf)
	}
	// The borrower does not run it: it syncs when its owner runs.
	run(t, borrower)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if borrower.WaitForCacheSync(short) {
		t.Fatal("the borrower started the shared informer")
	}
	run(t, owner)
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if !borrower.WaitForCacheSync(sctx) {
		t.Fatal("no sync")
	}
	var cm corev1.ConfigMap
	if err := cache.NewReader(borrower).Get(ctx, client.ObjectKey{Namespace: "default", Name: "one"}, &cm); err != nil {
		t.Fatalf("borrower's Reader: %v", err)
	}
	// Stop forgets it without stopping it.
	borrower.Stop(corev1.GroupVersion().WithKind("ConfigMap"))
	if !inf.HasSynced() {
		t.Error("the borrower's Stop stopped the shared informer")
	}
	if again, _ := cache.InformerFor(borrower, cache.InformerOptions[CM]{}); again == inf {
		t.Error("Stop did not forget the shared informer")
	}
}
