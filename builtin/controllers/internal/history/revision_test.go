package history

import (
	"slices"
	"testing"

	"github.com/converge-dev/converge/builtin/api/all"
	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

func TestEnsure(t *testing.T) {
	t.Parallel()
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	owner := &appsv1.DaemonSet{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "ds", UID: "u"}}
	tmpl := &corev1.PodTemplateSpec{ObjectMeta: api.ObjectMeta{Labels: map[string]string{"app": "x"}}}
	want := Revision{Owner: owner, Template: tmpl, Data: []byte(`{"v":1}`),
		Label: func(_, hash string) (string, string) { return "hash", hash }}
	list := func(fc *fakeclient.Client) []appsv1.ControllerRevision {
		l := &appsv1.ControllerRevisionList{}
		if err := fc.List(t.Context(), l); err != nil {
			t.Fatal(err)
		}
		return l.Items
	}

	fc := fakeclient.New(sch)
	var collisions *int32
	hash, err := Ensure(t.Context(), fc, want, &collisions, nil)
	if err != nil || hash != ComputeHash(tmpl, nil) || collisions != nil {
		t.Fatalf("create: %q, %v, collisions %v", hash, err, collisions)
	}
	crs := list(fc)
	if len(crs) != 1 || crs[0].Name != "ds-"+hash || crs[0].Revision != 1 || crs[0].Labels["hash"] != hash || crs[0].Labels["app"] != "x" {
		t.Fatalf("revisions %+v", crs)
	}

	// Found again: nothing written.
	fc.ResetActions()
	if h, err := Ensure(t.Context(), fc, want, &collisions, crs); err != nil || h != hash || len(fc.Actions()) != 0 {
		t.Fatalf("again: %q, %v, writes %v", h, err, fc.Actions())
	}

	// A rollback: the revision becomes the newest.
	newer := appsv1.ControllerRevision{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "ds-other"}, Revision: 4}
	if h, err := Ensure(t.Context(), fc, want, &collisions, append(crs, newer)); err != nil || h != hash {
		t.Fatalf("rollback: %q, %v", h, err)
	}
	got := &appsv1.ControllerRevision{}
	if err := fc.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "ds-" + hash}, got); err != nil || got.Revision != 5 {
		t.Fatalf("rolled back revision %d, %v; want 5", got.Revision, err)
	}

	// Same name, other data: a collision, the next hash is used.
	other := want
	other.Data = []byte(`{"v":2}`)
	h, err := Ensure(t.Context(), fc, other, &collisions, list(fc))
	if err != nil || collisions == nil || *collisions != 1 || h != ComputeHash(tmpl, collisions) {
		t.Fatalf("collision: %q, %v, collisions %v", h, err, collisions)
	}
	if names := len(list(fc)); names != 2 {
		t.Fatalf("%d revisions, want 2", names)
	}

	// A name taken by an object the list did not show: AlreadyExists is a
	// collision too.
	var c2 *int32
	if h, err := Ensure(t.Context(), fc, want, &c2, nil); err != nil || c2 == nil || h == hash {
		t.Fatalf("unseen collision: %q, %v, %v", h, err, c2)
	}
	if !slices.ContainsFunc(list(fc), func(cr appsv1.ControllerRevision) bool { return cr.Name == "ds-"+ComputeHash(tmpl, c2) }) {
		t.Fatal("no revision under the next hash")
	}

	// The owner's own revision that the (cached) list did not show yet: it is
	// read from the server and used, no collision.
	owned := want
	owned.Ref = api.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "u", Controller: api.Ptr(true)}
	fc2 := fakeclient.New(sch)
	var c3 *int32
	if _, err := Ensure(t.Context(), fc2, owned, &c3, nil); err != nil {
		t.Fatal(err)
	}
	if h, err := Ensure(t.Context(), fc2, owned, &c3, nil); err != nil || c3 != nil || h != hash {
		t.Fatalf("own unseen revision: %q, %v, collisions %v", h, err, c3)
	}
}
