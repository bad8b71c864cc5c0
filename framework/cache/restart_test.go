package cache_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/testenv"
)

// swapLW delegates to a ListerWatcher that can be replaced (the restarted
// API server listens on another port).
type swapLW struct {
	mu sync.Mutex
	lw cache.ListerWatcher[CM]
}

func (s *swapLW) get() cache.ListerWatcher[CM] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lw
}

func (s *swapLW) set(lw cache.ListerWatcher[CM]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lw = lw
}

func (s *swapLW) List(ctx context.Context, opts ...client.ListOption) ([]CM, string, error) {
	return s.get().List(ctx, opts...)
}

func (s *swapLW) Watch(ctx context.Context, opts ...client.ListOption) (client.Watcher, error) {
	return s.get().Watch(ctx, opts...)
}

func clientFor(t *testing.T, env *testenv.Environment) *client.Client {
	t.Helper()
	cfg, _, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	s := scheme.New()
	if err := s.AddKnownTypes(corev1.GroupVersion(), &corev1.ConfigMap{}, &corev1.ConfigMapList{}); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.REST().CloseIdleConnections)
	return c
}

func TestInformerSurvivesAPIServerRestart(t *testing.T) {
	dir := t.TempDir()
	env1, err := testenv.Start(t.Context(), testenv.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c1 := clientFor(t, env1)
	ctx := t.Context()
	if err := c1.Create(ctx, configMap("default", "before", nil)); err != nil {
		t.Fatal(err)
	}
	lw1, err := cache.NewClientListWatch[CM](c1)
	if err != nil {
		t.Fatal(err)
	}
	slw := &swapLW{lw: lw1}
	inf := cache.NewInformer[CM](slw, cache.InformerOptions[CM]{Namespace: "default"})
	var rec recorder
	inf.AddHandler(rec.handle)
	start(t, inf)

	if err := env1.Stop(); err != nil {
		t.Fatal(err)
	}
	c1.REST().CloseIdleConnections()
	env2 := testenv.StartT(t, testenv.Options{Dir: dir})
	c2 := clientFor(t, env2)
	lw2, err := cache.NewClientListWatch[CM](c2)
	if err != nil {
		t.Fatal(err)
	}
	slw.set(lw2)

	if err := c2.Delete(ctx, configMap("default", "before", nil)); err != nil {
		t.Fatal(err)
	}
	if err := c2.Create(ctx, configMap("default", "after", nil)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "events after restart", func() bool {
		_, gone := inf.Store().Get("default/before")
		_, there := inf.Store().Get("default/after")
		return !gone && there
	})
	// No cross-object ordering is promised (a relist delivers in key order):
	// compare each object's own sequence.
	perKey := map[string][]cache.EventType{}
	for _, ev := range rec.snapshot() {
		perKey[cache.KeyOf(ev.Object)] = append(perKey[cache.KeyOf(ev.Object)], ev.Type)
	}
	if got := fmt.Sprint(perKey); got != "map[default/after:[Added] default/before:[Added Deleted]]" {
		t.Fatalf("events per key = %s", got)
	}
}
