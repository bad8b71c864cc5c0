package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/testenv"
)

type CM = *corev1.ConfigMap

func newClient(t *testing.T) *client.Client {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{})
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

func configMap(ns, name string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: ns, Labels: lbls},
		Data:       map[string]string{"k": "v"},
	}
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []cache.Event[CM]
}

func (r *recorder) handle(ev cache.Event[CM]) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) snapshot() []cache.Event[CM] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cache.Event[CM](nil), r.events...)
}

// describe renders events as "Type key" strings.
func describe(evs []cache.Event[CM]) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = fmt.Sprintf("%s %s", ev.Type, cache.KeyOf(ev.Object))
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// runUntilEnd calls start (an informer's or a factory's) on a goroutine
// until the test ends, and returns the context it runs under.
func runUntilEnd(t *testing.T, start func(context.Context) error) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return ctx
}

// start runs inf until the test ends and waits for its sync.
func start(t *testing.T, inf *cache.Informer[CM]) {
	t.Helper()
	ctx := runUntilEnd(t, inf.Start)
	sctx, scancel := context.WithTimeout(ctx, 10*time.Second)
	defer scancel()
	if !inf.WaitForCacheSync(sctx) {
		t.Fatal("informer did not sync")
	}
}

func TestInformer(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	for _, cm := range []*corev1.ConfigMap{
		configMap("default", "pre-a", map[string]string{"app": "x"}),
		configMap("default", "pre-b", nil),
	} {
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("initial sync, events in order, namespace index, transform", func(t *testing.T) {
		inf, err := cache.NewClientInformer(c, cache.InformerOptions[CM]{
			Namespace: "default",
			Transform: func(cm CM) CM {
				cm.ManagedFields = nil
				if cm.Annotations == nil {
					cm.Annotations = map[string]string{}
				}
				cm.Annotations["transformed"] = "yes"
				return cm
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		var rec recorder
		inf.AddHandler(rec.handle)
		start(t, inf)
		for _, key := range []string{"default/pre-a", "default/pre-b"} {
			obj, ok := inf.Store().Get(key)
			if !ok {
				t.Fatalf("%s not in store after sync", key)
			}
			if obj.Annotations["transformed"] != "yes" || obj.ManagedFields != nil {
				t.Errorf("%s not transformed: %+v", key, obj.ObjectMeta)
			}
		}
		if got, want := describe(rec.snapshot()), []string{"Added default/pre-a", "Added default/pre-b"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("initial events = %v, want %v", got, want)
		}

		cm := configMap("default", "live", nil)
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["k"] = "v2"
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
		eventually(t, "3 live events", func() bool { return len(rec.snapshot()) >= 5 })
		evs := rec.snapshot()[2:]
		if got, want := describe(evs), []string{"Added default/live", "Updated default/live", "Deleted default/live"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("live events = %v, want %v", got, want)
		}
		if evs[1].Old.Data["k"] != "v" || evs[1].Object.Data["k"] != "v2" {
			t.Errorf("Updated: old %v new %v", evs[1].Old.Data, evs[1].Object.Data)
		}
		if evs[2].Object.Data["k"] != "v2" || evs[2].Object.Annotations["transformed"] != "yes" {
			t.Errorf("Deleted does not carry the last (transformed) object: %+v", evs[2].Object)
		}
		if _, ok := inf.Store().Get("default/live"); ok {
			t.Error("deleted object still in store")
		}
		byNS, err := inf.Store().ByIndex(cache.NamespaceIndex, "default")
		if err != nil {
			t.Fatal(err)
		}
		if len(byNS) != 2 {
			t.Errorf("ByIndex(namespace, default) = %d objects, want 2", len(byNS))
		}
		if _, err := inf.Store().ByIndex("nope", "x"); err == nil {
			t.Error("ByIndex of an unknown index: no error")
		}

		late := &recorder{}
		inf.AddHandler(late.handle)
		if got := len(late.snapshot()); got != 2 {
			t.Errorf("late handler replay = %d events, want 2", got)
		}
	})

	t.Run("label selector", func(t *testing.T) {
		inf, err := cache.NewClientInformer(c, cache.InformerOptions[CM]{LabelSelector: labels.SelectorFromSet(map[string]string{"app": "x"})})
		if err != nil {
			t.Fatal(err)
		}
		start(t, inf)
		if got := inf.Store().Keys(); fmt.Sprint(got) != "[default/pre-a]" {
			t.Fatalf("keys = %v, want [default/pre-a]", got)
		}
		if err := c.Create(ctx, configMap("default", "sel-no", nil)); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, configMap("default", "sel-yes", map[string]string{"app": "x"})); err != nil {
			t.Fatal(err)
		}
		eventually(t, "sel-yes", func() bool { _, ok := inf.Store().Get("default/sel-yes"); return ok })
		if _, ok := inf.Store().Get("default/sel-no"); ok {
			t.Error("unselected object cached")
		}
	})

	t.Run("stop and restart", func(t *testing.T) {
		inf, err := cache.NewClientInformer(c, cache.InformerOptions[CM]{Namespace: "default"})
		if err != nil {
			t.Fatal(err)
		}
		var rec recorder
		inf.AddHandler(rec.handle)
		ctx1, cancel1 := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- inf.Start(ctx1) }()
		if !inf.WaitForCacheSync(ctx) {
			t.Fatal("no sync")
		}
		if err := inf.Start(ctx); !errors.Is(err, cache.ErrRunning) {
			t.Errorf("second Start = %v, want ErrRunning", err)
		}
		cancel1()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if inf.HasSynced() {
			t.Error("HasSynced after stop")
		}
		// While stopped: one object goes away, one appears.
		if err := c.Delete(ctx, configMap("default", "sel-no", nil)); err != nil {
			t.Fatal(err)
		}
		if err := c.Create(ctx, configMap("default", "while-stopped", nil)); err != nil {
			t.Fatal(err)
		}
		n := len(rec.snapshot())
		start(t, inf)
		got := fmt.Sprint(describe(rec.snapshot()[n:]))
		if want := "[Deleted default/sel-no Added default/while-stopped]"; got != want {
			t.Errorf("events after restart = %s, want %s", got, want)
		}
	})
}
