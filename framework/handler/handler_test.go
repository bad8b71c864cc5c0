package handler_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/reconcile"
)

type queue []reconcile.Request

func (q *queue) Add(r reconcile.Request) { *q = append(*q, r) }

func req(ns, name string) reconcile.Request {
	return reconcile.Request{ObjectKey: client.ObjectKey{Namespace: ns, Name: name}}
}

func child(refs ...api.OwnerReference) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "child", OwnerReferences: refs}}
}

func TestHandlers(t *testing.T) {
	t.Parallel()
	ctrl := api.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Controller: api.Ptr(true)}
	other := api.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "side"}
	wrongKind := api.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", Controller: api.Ptr(true)}
	moved := api.OwnerReference{APIVersion: "apps/v2", Kind: "Deployment", Name: "old", Controller: api.Ptr(true)}
	deploy := api.GroupKind{Group: "apps", Kind: "Deployment"}
	tests := []struct {
		name string
		h    handler.EventHandler
		ev   handler.Event
		want queue
	}{
		{"object", handler.EnqueueRequestForObject(), handler.Event{Type: cache.Deleted, Object: child()}, queue{req("ns", "child")}},
		{"controller owner", handler.EnqueueRequestForOwner(deploy, handler.OwnerOptions{}),
			handler.Event{Type: cache.Added, Object: child(ctrl, other, wrongKind)}, queue{req("ns", "web")}},
		{"any owner", handler.EnqueueRequestForOwner(deploy, handler.OwnerOptions{AnyOwner: true}),
			handler.Event{Type: cache.Added, Object: child(ctrl, other)}, queue{req("ns", "web"), req("ns", "side")}},
		{"old and new owners on update", handler.EnqueueRequestForOwner(deploy, handler.OwnerOptions{}),
			handler.Event{Type: cache.Updated, Object: child(ctrl), Old: child(moved)}, queue{req("ns", "web"), req("ns", "old")}},
		{"cluster-scoped owner", handler.EnqueueRequestForOwner(deploy, handler.OwnerOptions{ClusterScopedOwner: true}),
			handler.Event{Type: cache.Added, Object: child(ctrl)}, queue{req("", "web")}},
		{"map func", handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj api.Object) []reconcile.Request {
			return []reconcile.Request{req("x", obj.GetName()+"-mapped")}
		}), handler.Event{Type: cache.Added, Object: child()}, queue{req("x", "child-mapped")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var q queue
			tc.h.Handle(t.Context(), tc.ev, &q)
			if diff := cmp.Diff(tc.want, q); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
