package cache_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
)

// TestReader reads through the shared informers' cache with the client's Get
// and List calls, against a real API server.
func TestReader(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	for _, cm := range []*corev1.ConfigMap{
		configMap("default", "a", map[string]string{"app": "x"}),
		configMap("default", "b", map[string]string{"app": "y"}),
		configMap("kube-system", "c", map[string]string{"app": "x"}),
	} {
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	f := cache.NewSharedInformers(c)
	r := cache.NewReader(f)
	var cm corev1.ConfigMap
	if err := r.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, &cm); !errors.Is(err, cache.ErrNotCached) {
		t.Fatalf("Get before any informer = %v, want ErrNotCached", err)
	}
	inf, err := cache.InformerFor(f, cache.InformerOptions[CM]{})
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

	// Get waits for the first sync, then copies.
	if err := r.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != "a" || cm.Labels["app"] != "x" || cm.Data["k"] != "v" || cm.ResourceVersion == "" {
		t.Fatalf("Get = %+v", cm)
	}
	cm.Data["k"] = "modified by the caller"
	if cached, _ := inf.Store().Get("default/a"); cached.Data["k"] != "v" {
		t.Fatal("modifying the object read changed the cache")
	}
	err = r.Get(ctx, client.ObjectKey{Namespace: "default", Name: "missing"}, &cm)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("Get of a missing object = %v, want NotFound", err)
	}

	names := func(opts ...client.ListOption) []string {
		t.Helper()
		var list corev1.ConfigMapList
		if err := r.List(ctx, &list, opts...); err != nil {
			t.Fatal(err)
		}
		if list.ResourceVersion == "" {
			t.Error("list without resourceVersion")
		}
		// The control plane keeps ConfigMaps of its own (kube-system/
		// extension-apiserver-authentication): only the test's count.
		ours := map[string]bool{"default/a": true, "default/b": true, "kube-system/c": true, "default/d": true}
		out := []string{}
		for _, item := range list.Items {
			if key := item.Namespace + "/" + item.Name; ours[key] {
				out = append(out, key)
			}
		}
		return out
	}
	appX, err := labels.Parse("app=x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"all", nil, []string{"default/a", "default/b", "kube-system/c"}},
		{"namespace", []client.ListOption{&client.ListOptions{Namespace: "default"}}, []string{"default/a", "default/b"}},
		{"labels", []client.ListOption{&client.ListOptions{LabelSelector: appX}}, []string{"default/a", "kube-system/c"}},
		{"namespace and labels", []client.ListOption{&client.ListOptions{Namespace: "default", LabelSelector: appX}}, []string{"default/a"}},
		{"name field", []client.ListOption{&client.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "b")}}, []string{"default/b"}},
		{"nothing", []client.ListOption{&client.ListOptions{Namespace: "other"}}, []string{}},
	} {
		if diff := cmp.Diff(tc.want, names(tc.opts...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	var list corev1.ConfigMapList
	if err := r.List(ctx, &list, &client.ListOptions{FieldSelector: fields.OneTermEqualSelector("data.k", "v")}); err == nil {
		t.Error("a field selector the cache cannot evaluate was accepted")
	}

	// A field indexed with IndexField, added to the running informer:
	// equality on it is answered from the index, with the other selectors.
	byApp := func(cm CM) []string { return []string{cm.Labels["app"]} }
	if err := cache.IndexField(f, "metadata.labels.app", byApp); err != nil {
		t.Fatal(err)
	}
	if err := cache.IndexField(f, "metadata.labels.app", byApp); err != nil {
		t.Fatalf("indexing a field again: %v", err)
	}
	appField := func(v string, more ...fields.Requirement) client.ListOption {
		reqs := append([]fields.Requirement{{Field: "metadata.labels.app", Operator: fields.Equals, Value: v}}, more...)
		return &client.ListOptions{FieldSelector: fields.NewSelector(reqs...)}
	}
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want []string
	}{
		{"indexed field", []client.ListOption{appField("x")}, []string{"default/a", "kube-system/c"}},
		{"indexed field and namespace", []client.ListOption{appField("x"), client.InNamespace("default")}, []string{"default/a"}},
		{"indexed field and name", []client.ListOption{appField("x", fields.Requirement{Field: "metadata.name", Operator: fields.Equals, Value: "c"})}, []string{"kube-system/c"}},
		{"indexed field, no match", []client.ListOption{appField("z")}, []string{}},
	} {
		if diff := cmp.Diff(tc.want, names(tc.opts...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if err := c.Create(ctx, configMap("default", "d", map[string]string{"app": "x"})); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(names(appField("x"))) != 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a new object never reached the index: %v", names(appField("x")))
		}
	}

	// A Lister selects the same objects without copying them.
	lst, err := cache.ListerFor[CM](f)
	if err != nil {
		t.Fatal(err)
	}
	shared, err := lst.List(ctx, appField("x"), client.InNamespace("default"))
	if err != nil {
		t.Fatal(err)
	}
	var sharedNames []string
	for _, cm := range shared {
		sharedNames = append(sharedNames, cm.Namespace+"/"+cm.Name)
	}
	if diff := cmp.Diff([]string{"default/a", "default/d"}, sharedNames); diff != "" {
		t.Errorf("Lister.List (-want +got):\n%s", diff)
	}
	if one, err := lst.Get(ctx, client.ObjectKey{Namespace: "default", Name: "a"}); err != nil {
		t.Fatal(err)
	} else if cached, _ := inf.Store().Get("default/a"); one != cached {
		t.Error("Lister.Get copied the object")
	}
	if _, err := lst.Get(ctx, client.ObjectKey{Namespace: "default", Name: "missing"}); !apierrors.IsNotFound(err) {
		t.Errorf("Lister.Get of a missing object = %v, want NotFound", err)
	}

	// Writes through the client show up in reads from the cache.
	if err := c.Delete(ctx, configMap("default", "b", nil)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !apierrors.IsNotFound(r.Get(ctx, client.ObjectKey{Namespace: "default", Name: "b"}, &cm)) {
		if time.Now().After(deadline) {
			t.Fatal("the delete never reached the cache")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
