package cache_test

import (
	"context"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/cache"
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
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- f.Start(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()
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
