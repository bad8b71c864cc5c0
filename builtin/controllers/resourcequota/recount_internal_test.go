package resourcequota

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/reconcile"
)

// fakeQuotas holds one quota and records its status writes.
type fakeQuotas struct{ q corev1.ResourceQuota }

func (f *fakeQuotas) Get(_ context.Context, _ client.ObjectKey, obj api.Object) error {
	*obj.(*corev1.ResourceQuota) = f.q
	return nil
}
func (f *fakeQuotas) Status() client.StatusWriter { return f }
func (f *fakeQuotas) Update(_ context.Context, obj api.Object, _ ...client.UpdateOption) error {
	f.q = *obj.(*corev1.ResourceQuota)
	return nil
}
func (f *fakeQuotas) Patch(context.Context, api.Object, client.Patch, ...client.PatchOption) error {
	return fmt.Errorf("not used")
}

// fakeCache lists n ConfigMaps.
type fakeCache struct{ n int }

func (f *fakeCache) Get(context.Context, client.ObjectKey, api.Object) error {
	return fmt.Errorf("not used")
}
func (f *fakeCache) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l, ok := list.(*corev1.ConfigMapList)
	if !ok {
		return nil
	}
	l.Items = make([]corev1.ConfigMap, f.n)
	for i := range l.Items {
		l.Items[i].Name, l.Items[i].Namespace = fmt.Sprintf("cm-%d", i), "ns"
	}
	return nil
}

// TestRecountAfterLowerUsage: a recount lower than the quota's usage (a
// release, or an object admission charged that the cache does not show yet)
// is counted again within a second instead of at the resync, so a charge the
// cache had not seen comes back.
func TestRecountAfterLowerUsage(t *testing.T) {
	quotas := &fakeQuotas{}
	quotas.q.Name, quotas.q.Namespace = "q", "ns"
	quotas.q.Spec.Hard = corev1.ResourceList{"count/configmaps": api.MustParseQuantity("5")}
	quotas.q.Status = corev1.ResourceQuotaStatus{Hard: quotas.q.Spec.Hard, Used: corev1.ResourceList{"count/configmaps": api.MustParseQuantity("2")}}
	cache := &fakeCache{n: 1} // admission charged a second one the cache lacks
	r := &reconciler{reader: cache, client: quotas, opts: Options{ResyncPeriod: 5 * time.Minute}}
	req := reconcile.Request{ObjectKey: client.ObjectKey{Namespace: "ns", Name: "q"}}

	res, err := r.Reconcile(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := quotas.q.Status.Used["count/configmaps"]; got.String() != "1" || res.RequeueAfter != recountAfterRelease {
		t.Fatalf("lower recount: used %s, requeue after %v; want 1 and %v", got.String(), res.RequeueAfter, recountAfterRelease)
	}
	cache.n = 2 // the cache caught up
	if res, err = r.Reconcile(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if got := quotas.q.Status.Used["count/configmaps"]; got.String() != "2" || res.RequeueAfter != 5*time.Minute {
		t.Fatalf("recount: used %s, requeue after %v; want 2 and the resync", got.String(), res.RequeueAfter)
	}
}
