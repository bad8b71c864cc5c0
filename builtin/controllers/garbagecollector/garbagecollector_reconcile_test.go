package garbagecollector

import (
	"context"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// fakeWorld is the reconciler's live objects (a map), its recorder and a
// graph that has always synced.
type fakeWorld struct {
	live    map[string]*api.Unstructured // "namespace/name" → object
	deleted []string
	updated []*api.Unstructured
	events  []string
}

func (w *fakeWorld) reconciler(g *graph) *reconciler {
	return &reconciler{graph: g, synced: w, objects: w, recorder: w}
}

func (w *fakeWorld) allSynced() bool { return true }

func (w *fakeWorld) Namespaced(_ context.Context, gvk api.GroupVersionKind) (bool, error) {
	return gvk.Kind != "Namespace", nil
}

func (w *fakeWorld) Get(_ context.Context, obj *api.Unstructured) error {
	o, ok := w.live[client.ObjectKeyFromObject(obj).String()]
	if !ok {
		return apierrors.NewNotFound(api.GroupResource{Resource: "things"}, obj.GetName())
	}
	obj.Object = o.DeepCopy().Object
	return nil
}

func (w *fakeWorld) Update(_ context.Context, obj *api.Unstructured) error {
	w.updated = append(w.updated, obj)
	return nil
}

func (w *fakeWorld) Delete(_ context.Context, obj *api.Unstructured, policy string) error {
	w.deleted = append(w.deleted, client.ObjectKeyFromObject(obj).String()+":"+policy)
	return nil
}

func (w *fakeWorld) Event(_ context.Context, _ api.Object, _, reason, _ string) {
	w.events = append(w.events, reason)
}

func liveObject(ns, name, uid string) *api.Unstructured {
	u := &api.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}}}
	u.SetNamespace(ns)
	u.SetName(name)
	api.SetNestedField(u.Object, uid, "metadata", "uid")
	return u
}

func withOwners(u *api.Unstructured, refs ...api.OwnerReference) *api.Unstructured {
	u.SetOwnerReferences(refs)
	return u
}

func withFinalizers(u *api.Unstructured, f ...string) *api.Unstructured {
	u.SetFinalizers(f)
	return u
}

func TestReconcileOwners(t *testing.T) {
	t.Parallel()
	cmRef := func(name, uid string) api.OwnerReference {
		return api.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: name, UID: uid}
	}
	tests := []struct {
		name string
		dep  *node
		// liveDep is the dependent as the API server has it: by default the
		// graph's view of it; noLiveDep means it is gone.
		liveDep     *api.Unstructured
		noLiveDep   bool
		live        []*api.Unstructured
		wantDeleted []string
		wantUpdated int
		wantEvents  []string
	}{{
		name:        "owner absent: background delete",
		dep:         &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		wantDeleted: []string{"a/dep:Background"},
	}, {
		name: "owner present: kept",
		dep:  &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		live: []*api.Unstructured{liveObject("a", "owner", "o")},
	}, {
		name:        "owner name reused by another uid: delete",
		dep:         &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		live:        []*api.Unstructured{liveObject("a", "owner", "other")},
		wantDeleted: []string{"a/dep:Background"},
	}, {
		name:        "owner looked up in the dependent's namespace only",
		dep:         &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		live:        []*api.Unstructured{liveObject("b", "owner", "o")},
		wantDeleted: []string{"a/dep:Background"},
	}, {
		name:        "cluster-scoped dependent with a namespaced owner kind",
		dep:         &node{APIVersion: "v1", Kind: "Namespace", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		live:        []*api.Unstructured{liveObject("", "owner", "o")},
		wantDeleted: []string{"dep:Background"},
		wantEvents:  []string{reasonOwnerRefInvalidNamespace},
	}, {
		name:        "one live owner and one dangling: the dangling reference is dropped",
		dep:         &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o"), cmRef("ghost", "g")}},
		live:        []*api.Unstructured{liveObject("a", "owner", "o"), withOwners(liveObject("a", "dep", "d"), cmRef("owner", "o"), cmRef("ghost", "g"))},
		wantUpdated: 1,
	}, {
		name:    "graph is stale: the live dependent has no ownerReferences any more",
		dep:     &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		liveDep: liveObject("a", "dep", "d"),
	}, {
		name:    "graph is stale: the live dependent now has a live owner",
		dep:     &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		liveDep: withOwners(liveObject("a", "dep", "d"), cmRef("other", "p")),
		live:    []*api.Unstructured{liveObject("a", "other", "p")},
	}, {
		name:    "graph is stale: the dependent's name now holds another object",
		dep:     &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		liveDep: withOwners(liveObject("a", "dep", "d2"), cmRef("owner", "o")),
	}, {
		name:      "dependent gone",
		dep:       &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		noLiveDep: true,
	}, {
		name:        "dependent with the orphan finalizer is deleted with propagationPolicy Orphan",
		dep:         &node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Owners: []api.OwnerReference{cmRef("owner", "o")}},
		liveDep:     withFinalizers(withOwners(liveObject("a", "dep", "d"), cmRef("owner", "o")), api.FinalizerOrphanDependents),
		wantDeleted: []string{"a/dep:Orphan"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := &fakeWorld{live: map[string]*api.Unstructured{}}
			if !tt.noLiveDep {
				dep := tt.liveDep
				if dep == nil {
					dep = withOwners(liveObject(tt.dep.Namespace, tt.dep.Name, tt.dep.UID), tt.dep.Owners...)
				}
				w.live[client.ObjectKeyFromObject(dep).String()] = dep
			}
			for _, o := range tt.live {
				w.live[client.ObjectKeyFromObject(o).String()] = o
			}
			g := newGraph()
			g.upsert(tt.dep)
			_, err := w.reconciler(g).Reconcile(t.Context(), reconcile.Request{ObjectKey: client.ObjectKey{Name: tt.dep.UID}})
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if len(w.deleted) != len(tt.wantDeleted) || (len(w.deleted) > 0 && w.deleted[0] != tt.wantDeleted[0]) {
				t.Errorf("deleted = %v, want %v", w.deleted, tt.wantDeleted)
			}
			if len(w.updated) != tt.wantUpdated {
				t.Errorf("updates = %d, want %d", len(w.updated), tt.wantUpdated)
			}
			if tt.wantUpdated > 0 {
				if refs := w.updated[0].GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "o" {
					t.Errorf("ownerReferences after update = %v, want only o", refs)
				}
			}
			if len(w.events) != len(tt.wantEvents) || (len(w.events) > 0 && w.events[0] != tt.wantEvents[0]) {
				t.Errorf("events = %v, want %v", w.events, tt.wantEvents)
			}
		})
	}
}

func TestReconcileForegroundWaitsForBlockingDependents(t *testing.T) {
	t.Parallel()
	w := &fakeWorld{live: map[string]*api.Unstructured{}}
	owner := liveObject("a", "owner", "o")
	owner.SetFinalizers([]string{api.FinalizerDeleteDependents})
	w.live["a/owner"] = owner
	g := newGraph()
	g.upsert(&node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "owner", UID: "o", Deleting: true, Finalizers: []string{api.FinalizerDeleteDependents}})
	g.upsert(&node{APIVersion: "v1", Kind: "ConfigMap", Namespace: "a", Name: "dep", UID: "d", Deleting: true,
		Owners: []api.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "o", BlockOwnerDeletion: api.Ptr(true)}}})
	r := w.reconciler(g)
	req := reconcile.Request{ObjectKey: client.ObjectKey{Name: "o"}}
	if _, err := r.Reconcile(t.Context(), req); err != nil || len(w.updated) != 0 {
		t.Fatalf("with a blocking dependent: err=%v updates=%d, want no update", err, len(w.updated))
	}
	g.remove("d")
	if _, err := r.Reconcile(t.Context(), req); err != nil || len(w.updated) != 1 {
		t.Fatalf("without dependents: err=%v updates=%d, want the finalizer removed", err, len(w.updated))
	}
	if f := w.updated[0].GetFinalizers(); len(f) != 0 {
		t.Errorf("finalizers after update = %v, want none", f)
	}
}
