package fakeclient_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/controllers/internal/fakeclient"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// TestServerRules checks the rules of the API server the fake keeps.
func TestServerRules(t *testing.T) {
	t.Parallel()
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	seed := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "x"}}}
	c := fakeclient.New(sch, seed)
	if seed.ResourceVersion != "" {
		t.Fatal("New changed the seed object")
	}
	key := client.ObjectKey{Namespace: "ns", Name: "a"}

	// Create: names from generateName, uid and resourceVersion set, taken
	// names refused.
	p := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", GenerateName: "g-", Labels: map[string]string{"app": "y"}}}
	if err := c.Create(ctx, p); err != nil || p.Name == "" || p.UID == "" || p.ResourceVersion == "" {
		t.Fatalf("create = %v, %+v", err, p.ObjectMeta)
	}
	if err := c.Create(ctx, &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "a"}}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("create of a taken name = %v, want AlreadyExists", err)
	}

	// Get and List with namespace and label selector, in key order.
	got := &corev1.Pod{}
	if err := c.Get(ctx, key, got); err != nil || got.Labels["app"] != "x" {
		t.Fatalf("get = %v, %+v", err, got)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "nope"}, got); !apierrors.IsNotFound(err) {
		t.Errorf("get of a missing object = %v, want NotFound", err)
	}
	l := &corev1.PodList{}
	if err := c.List(ctx, l, client.InNamespace("ns"), client.MatchingLabels{"app": "x"}); err != nil || len(l.Items) != 1 || l.Items[0].Name != "a" {
		t.Fatalf("list = %v, %v", err, l.Items)
	}

	// Update checks the resourceVersion and keeps the status; a status
	// write changes only the status.
	got.Status.Phase = corev1.PodRunning
	if err := c.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	stale := got.ResourceVersion
	got.Labels["app"] = "z"
	got.Status.Phase = corev1.PodFailed
	if err := c.Update(ctx, got); err != nil || got.Status.Phase != corev1.PodRunning || got.Labels["app"] != "z" {
		t.Fatalf("update = %v, phase %s, labels %v; want the stored status kept", err, got.Status.Phase, got.Labels)
	}
	if err := c.Update(ctx, &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "a", ResourceVersion: stale}}); !apierrors.IsConflict(err) {
		t.Errorf("update with a stale resourceVersion = %v, want Conflict", err)
	}

	// Patch (merge) and delete with a uid precondition; the last state
	// stays readable through GetDeleted.
	target := &corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "a"}}
	if err := c.Patch(ctx, target, client.RawPatch(client.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`))); err != nil ||
		target.Labels["patched"] != "yes" || target.Labels["app"] != "z" {
		t.Fatalf("patch = %v, labels %v", err, target.Labels)
	}
	if err := c.Delete(ctx, target, client.Preconditions{UID: api.Ptr("other")}); !apierrors.IsConflict(err) {
		t.Errorf("delete with another uid = %v, want Conflict", err)
	}
	if err := c.Delete(ctx, target, client.Preconditions{UID: api.Ptr(target.UID)}); err != nil {
		t.Fatal(err)
	}
	if err := c.GetDeleted(key, got); err != nil || got.Labels["patched"] != "yes" {
		t.Errorf("get deleted = %v, %v", err, got.Labels)
	}

	want := []string{"create Pod ns/" + p.Name, "update-status Pod ns/a", "update Pod ns/a", "patch Pod ns/a", "delete Pod ns/a"}
	if a := c.Actions(); !slices.Equal(a, want) {
		t.Errorf("actions %v, want %v", a, want)
	}

	// Fail injects errors, with the verb and key.
	boom := errors.New("boom")
	c.Fail = func(verb string, k client.ObjectKey, _ any) error {
		if verb == "get" && k.Name == "x" {
			return boom
		}
		return nil
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "x"}, got); !errors.Is(err, boom) {
		t.Errorf("get with Fail = %v, want boom", err)
	}
}

func TestLister(t *testing.T) {
	t.Parallel()
	sch, err := all.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fakeclient.New(sch,
		&corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "b", Labels: map[string]string{"app": "x"}}, Spec: corev1.PodSpec{NodeName: "n1"}},
		&corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "x"}}},
		&corev1.Pod{ObjectMeta: api.ObjectMeta{Namespace: "other", Name: "c", Labels: map[string]string{"app": "x"}}})
	l := fakeclient.ListerOf[*corev1.Pod](c)
	pods, err := l.List(t.Context(), client.InNamespace("ns"), client.MatchingLabels{"app": "x"})
	if err != nil || len(pods) != 2 || pods[0].Name != "a" || pods[1].Spec.NodeName != "n1" {
		t.Fatalf("list = %v, %+v", err, pods)
	}
	if p, err := l.Get(t.Context(), client.ObjectKey{Namespace: "other", Name: "c"}); err != nil || p.Name != "c" {
		t.Fatalf("get = %v, %+v", err, p)
	}
	if _, err := l.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "zz"}); !apierrors.IsNotFound(err) {
		t.Errorf("get of a missing pod = %v, want NotFound", err)
	}
}
