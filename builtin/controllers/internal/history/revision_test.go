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
	name, hash, err := Ensure(t.Context(), fc, want, &collisions, nil)
	if err != nil || hash != ComputeHash(tmpl, nil) || name != "ds-"+hash || collisions != nil {
		t.Fatalf("create: %q, %v, collisions %v", hash, err, collisions)
	}
	crs := list(fc)
	if len(crs) != 1 || crs[0].Name != "ds-"+hash || crs[0].Revision != 1 || crs[0].Labels["hash"] != hash || crs[0].Labels["app"] != "x" {
		t.Fatalf("revisions %+v", crs)
	}

	// Found again: nothing written.
	fc.ResetActions()
	if _, h, err := Ensure(t.Context(), fc, want, &collisions, crs); err != nil || h != hash || len(fc.Actions()) != 0 {
		t.Fatalf("again: %q, %v, writes %v", h, err, fc.Actions())
	}

	// A rollback: the revision becomes the newest.
	newer := appsv1.ControllerRevision{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "ds-other"}, Revision: 4}
	if _, h, err := Ensure(t.Context(), fc, want, &collisions, append(crs, newer)); err != nil || h != hash {
		t.Fatalf("rollback: %q, %v", h, err)
	}
	got := &appsv1.ControllerRevision{}
	if err := fc.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "ds-" + hash}, got); err != nil || got.Revision != 5 {
		t.Fatalf("rolled back revision %d, %v; want 5", got.Revision, err)
	}

	// Same name, other data: a collision, the next hash is used.
	other := want
	other.Data = []byte(`{"v":2}`)
	_, h, err := Ensure(t.Context(), fc, other, &collisions, list(fc))
	if err != nil || collisions == nil || *collisions != 1 || h != ComputeHash(tmpl, collisions) {
		t.Fatalf("collision: %q, %v, collisions %v", h, err, collisions)
	}
	if names := len(list(fc)); names != 2 {
		t.Fatalf("%d revisions, want 2", names)
	}

	// A name taken by an object the list did not show: AlreadyExists is a
	// collision too.
	var c2 *int32
	if _, h, err := Ensure(t.Context(), fc, want, &c2, nil); err != nil || c2 == nil || h == hash {
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
	if _, _, err := Ensure(t.Context(), fc2, owned, &c3, nil); err != nil {
		t.Fatal(err)
	}
	if _, h, err := Ensure(t.Context(), fc2, owned, &c3, nil); err != nil || c3 != nil || h != hash {
		t.Fatalf("own unseen revision: %q, %v, collisions %v", h, err, c3)
	}

	// A revision of the same data under another name (created by someone
	// else, as the e2e ControllerRevision spec does, without the hash
	// label) is the template's: adopted, labelled with its name, made the
	// newest; no revision under the template's own hash appears.
	fc3 := fakeclient.New(sch)
	foreign := appsv1.ControllerRevision{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "ds-foreign", Labels: map[string]string{"app": "x"}},
		Data: api.RawExtension{Raw: []byte(`{"v":1}`)}, Revision: 2}
	older := appsv1.ControllerRevision{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "ds-older"}, Data: api.RawExtension{Raw: []byte(`{"v":0}`)}, Revision: 3}
	for _, cr := range []appsv1.ControllerRevision{foreign, older} {
		if err := fc3.Create(t.Context(), &cr); err != nil {
			t.Fatal(err)
		}
	}
	var c4 *int32
	n, h, err := Ensure(t.Context(), fc3, want, &c4, list(fc3))
	if err != nil || n != "ds-foreign" || h != "ds-foreign" || c4 != nil {
		t.Fatalf("adopt: %q %q, %v, collisions %v", n, h, err, c4)
	}
	if err := fc3.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "ds-foreign"}, got); err != nil || got.Revision != 4 || got.Labels["hash"] != "ds-foreign" {
		t.Fatalf("adopted revision %+v, %v; want revision 4 with its hash label", got, err)
	}
	if l := list(fc3); len(l) != 2 {
		t.Fatalf("%d revisions after adoption, want 2", len(l))
	}
	// With its label, the label's value is the hash.
	if _, h, err := Ensure(t.Context(), fc3, want, &c4, list(fc3)); err != nil || h != "ds-foreign" {
		t.Fatalf("adopted again: %q, %v", h, err)
	}
}
