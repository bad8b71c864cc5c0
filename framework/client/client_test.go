package client_test

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	appsv1 "github.com/converge-dev/converge/builtin/api/apps/v1"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/restmapper"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/testenv"
)

// Scale is autoscaling/v1 Scale, declared here because no builtin package has it yet.
type Scale struct {
	api.TypeMeta   `json:",inline"`
	api.ObjectMeta `json:"metadata,omitempty"`
	Spec           struct {
		Replicas int32 `json:"replicas,omitempty"`
	} `json:"spec,omitempty"`
	Status struct {
		Replicas int32  `json:"replicas"`
		Selector string `json:"selector,omitempty"`
	} `json:"status,omitempty"`
}

var appsGV = api.GroupVersion{Group: "apps", Version: "v1"}

func newScheme(t *testing.T) *scheme.Scheme {
	t.Helper()
	s := scheme.New()
	if err := errors.Join(
		s.AddKnownTypes(corev1.GroupVersion(), &corev1.ConfigMap{}, &corev1.ConfigMapList{}, &corev1.Pod{}, &corev1.PodList{}),
		s.AddKnownTypes(appsGV, &appsv1.Deployment{}, &appsv1.DeploymentList{}),
		s.AddKnownTypes(api.GroupVersion{Group: "autoscaling", Version: "v1"}, &Scale{}),
	); err != nil {
		t.Fatal(err)
	}
	return s
}

func newClient(t *testing.T) *client.Client {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{})
	cfg, ns, err := kubeconfig.LoadKubeconfig(env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	if ns != "default" {
		t.Fatalf("namespace = %q, want default", ns)
	}
	c, err := client.New(cfg, client.Options{Scheme: newScheme(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.REST().CloseIdleConnections) // runs before the environment stops
	return c
}

func configMap(name string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default", Labels: lbls},
		Data:       map[string]string{"k": "v"},
	}
}

func deployment(name string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: api.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: api.Ptr(int32(1)),
			Selector: &api.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: api.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
}

func TestClient(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()

	t.Run("typed CRUD", func(t *testing.T) {
		cm := configMap("crud", map[string]string{"a": "1"})
		if err := c.Create(ctx, cm); err != nil {
			t.Fatalf("create: %v", err)
		}
		if cm.UID == "" || cm.ResourceVersion == "" || cm.Kind != "ConfigMap" {
			t.Fatalf("create did not update the object: %+v", cm.ObjectMeta)
		}
		var got corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
			t.Fatalf("get: %v", err)
		}
		if diff := cmp.Diff(cm.Data, got.Data); diff != "" {
			t.Fatalf("get data (-want +got):\n%s", diff)
		}
		got.Data["k"] = "v2"
		got.Labels = nil // removed fields must not survive the in-place update
		if err := c.Update(ctx, &got); err != nil {
			t.Fatalf("update: %v", err)
		}
		if got.ResourceVersion == cm.ResourceVersion || got.Labels != nil {
			t.Fatalf("update result: rv %s labels %v", got.ResourceVersion, got.Labels)
		}

		// Stale update → 409 Conflict.
		cm.Data["k"] = "stale"
		err := c.Update(ctx, cm)
		if !apierrors.IsConflict(err) {
			t.Fatalf("stale update: err = %v, want Conflict", err)
		}
		if cm.ResourceVersion == got.ResourceVersion {
			t.Fatal("a failed update must leave the object unchanged")
		}

		// Merge patch from a copy.
		orig := got
		orig.Data = maps.Clone(got.Data)
		got.Data["p"] = "patched"
		if err := c.Patch(ctx, &got, client.MergeFrom(&orig)); err != nil {
			t.Fatalf("merge patch: %v", err)
		}
		if got.Data["p"] != "patched" || got.Data["k"] != "v2" {
			t.Fatalf("merge patch result: %v", got.Data)
		}
		// Optimistic-lock merge patch with a stale original → Conflict.
		stale := orig
		stale.Data = map[string]string{"x": "y"}
		if err := c.Patch(ctx, &got, client.MergeFromWithOptimisticLock(&stale)); !apierrors.IsConflict(err) {
			t.Fatalf("optimistic patch: err = %v, want Conflict", err)
		}
		// Raw patches of every type.
		for _, p := range []client.Patch{
			client.RawPatch(client.MergePatchType, []byte(`{"data":{"m":"1"}}`)),
			client.RawPatch(client.StrategicMergePatchType, []byte(`{"data":{"s":"1"}}`)),
			client.RawPatch(client.JSONPatchType, []byte(`[{"op":"add","path":"/data/j","value":"1"}]`)),
		} {
			if err := c.Patch(ctx, &got, p); err != nil {
				t.Fatalf("%s: %v", p.Type(), err)
			}
		}
		for _, k := range []string{"m", "s", "j"} {
			if got.Data[k] != "1" {
				t.Fatalf("raw patches: data = %v", got.Data)
			}
		}

		// Create again → AlreadyExists; dry-run create persists nothing.
		if err := c.Create(ctx, configMap("crud", nil)); !apierrors.IsAlreadyExists(err) {
			t.Fatalf("duplicate create: %v", err)
		}
		if err := c.Create(ctx, configMap("dry", nil), client.DryRunAll); err != nil {
			t.Fatalf("dry-run create: %v", err)
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "dry"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Fatalf("dry-run object exists: %v", err)
		}

		// Delete with a wrong precondition → Conflict; then delete for real.
		if err := c.Delete(ctx, &got, client.Preconditions{UID: api.Ptr("wrong")}); !apierrors.IsConflict(err) {
			t.Fatalf("delete with bad precondition: %v", err)
		}
		if err := c.Delete(ctx, &got, client.PropagationPolicy(api.DeletePropagationBackground), client.GracePeriodSeconds(0),
			client.Preconditions{UID: api.Ptr(got.UID)}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		err = c.Get(ctx, client.ObjectKeyFromObject(&got), &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) || client.IgnoreNotFound(err) != nil {
			t.Fatalf("get after delete: %v", err)
		}
	})

	t.Run("server-side apply", func(t *testing.T) {
		ctx := t.Context()
		// A typed object with an empty TypeMeta: the client names its kind.
		desired := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "applied"}, Data: map[string]string{"a": "1"}}
		if err := c.Patch(ctx, desired, client.Apply, client.FieldOwner("op-a")); err != nil {
			t.Fatalf("apply (create): %v", err)
		}
		if desired.Data["a"] != "1" || len(desired.ManagedFields) != 1 || desired.ManagedFields[0].Manager != "op-a" ||
			desired.ManagedFields[0].Operation != "Apply" {
			t.Fatalf("applied object: data %v, managedFields %+v", desired.Data, desired.ManagedFields)
		}
		other := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "applied"}, Data: map[string]string{"a": "2"}}
		if err := c.Patch(ctx, other, client.Apply, client.FieldOwner("op-b")); !apierrors.IsConflict(err) {
			t.Fatalf("conflicting apply: err = %v, want Conflict", err)
		}
		if err := c.Patch(ctx, other, client.Apply, client.FieldOwner("op-b"), client.ForceOwnership); err != nil {
			t.Fatalf("forced apply: %v", err)
		}
		if other.Data["a"] != "2" {
			t.Fatalf("forced apply result: %v", other.Data)
		}
		// op-a stops sending data.a (it lost it) and adds b: a stays op-b's.
		mine := &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: "default", Name: "applied"}, Data: map[string]string{"b": "3"}}
		if err := c.Patch(ctx, mine, client.Apply, client.FieldOwner("op-a")); err != nil {
			t.Fatalf("apply b: %v", err)
		}
		if mine.Data["a"] != "2" || mine.Data["b"] != "3" {
			t.Fatalf("after op-a applies b: %v", mine.Data)
		}
	})

	t.Run("unstructured", func(t *testing.T) {
		u := &api.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "unstr", "namespace": "default"},
			"data":     map[string]any{"a": "b"},
		}}
		if err := c.Create(ctx, u); err != nil {
			t.Fatalf("create: %v", err)
		}
		if u.GetUID() == "" {
			t.Fatal("create did not update the object")
		}
		got := &api.Unstructured{}
		got.SetGroupVersionKind(api.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
		if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "unstr"}, got); err != nil {
			t.Fatalf("get: %v", err)
		}
		api.SetNestedField(got.Object, "c", "data", "a")
		if err := c.Update(ctx, got); err != nil {
			t.Fatalf("update: %v", err)
		}
		orig := got.DeepCopy()
		got.SetLabels(map[string]string{"x": "y"})
		if err := c.Patch(ctx, got, client.MergeFrom(orig)); err != nil {
			t.Fatalf("patch: %v", err)
		}
		list := &api.UnstructuredList{APIVersion: "v1", Kind: "ConfigMapList"}
		if err := c.List(ctx, list, client.InNamespace("default"), client.MatchingLabels{"x": "y"}); err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || api.NestedString(list.Items[0].Object, "data", "a") != "c" {
			t.Fatalf("list = %+v", list.Items)
		}
		if err := c.Delete(ctx, got); err != nil {
			t.Fatalf("delete: %v", err)
		}
		// Missing kind: a clear client-side error.
		if err := c.Get(ctx, client.ObjectKey{Name: "x"}, &api.Unstructured{}); err == nil {
			t.Fatal("get of an Unstructured without kind succeeded")
		}
	})

	t.Run("create without namespace surfaces the server error", func(t *testing.T) {
		cm := configMap("nons", nil)
		cm.Namespace = ""
		err := c.Create(ctx, cm)
		var se *apierrors.StatusError
		if !errors.As(err, &se) {
			t.Fatalf("err = %v, want a StatusError", err)
		}
	})

	t.Run("list pagination and DeleteAllOf", func(t *testing.T) {
		for i := range 5 {
			if err := c.Create(ctx, configMap(fmt.Sprintf("page-%d", i), map[string]string{"set": "page"})); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Create(ctx, configMap("other", map[string]string{"set": "other"})); err != nil {
			t.Fatal(err)
		}
		var names []string
		var cont string
		pages := 0
		for {
			var l corev1.ConfigMapList
			if err := c.List(ctx, &l, client.InNamespace("default"), client.MatchingLabels{"set": "page"}, client.Limit(2), client.Continue(cont)); err != nil {
				t.Fatalf("list: %v", err)
			}
			pages++
			for _, it := range l.Items {
				names = append(names, it.Name)
			}
			if cont = l.Continue; cont == "" {
				break
			}
		}
		if pages != 3 || len(names) != 5 {
			t.Fatalf("pages=%d names=%v, want 3 pages of 5 names", pages, names)
		}
		sel, err := labels.Parse("set in (page)")
		if err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace("default"), client.MatchingLabelSelector{Selector: sel}); err != nil {
			t.Fatalf("delete all: %v", err)
		}
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l, client.InNamespace("default"), client.MatchingFields{"metadata.namespace": "default"}); err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, it := range l.Items {
			if it.Labels["set"] != "" {
				left = append(left, it.Name)
			}
		}
		if diff := cmp.Diff([]string{"other"}, left); diff != "" {
			t.Fatalf("after DeleteAllOf (-want +got):\n%s", diff)
		}
	})

	t.Run("deployment status and scale", func(t *testing.T) {
		d := deployment("web")
		if err := c.Create(ctx, d); err != nil {
			t.Fatalf("create: %v", err)
		}
		gen := d.Generation
		d.Status.ObservedGeneration = gen
		d.Status.Replicas = 7
		d.Spec.Replicas = api.Ptr(int32(5)) // must be ignored by the status endpoint
		if err := c.Status().Update(ctx, d); err != nil {
			t.Fatalf("status update: %v", err)
		}
		if d.Status.Replicas != 7 || *d.Spec.Replicas != 1 || d.Generation != gen {
			t.Fatalf("after status update: status.replicas=%d spec.replicas=%d generation=%d (was %d)",
				d.Status.Replicas, *d.Spec.Replicas, d.Generation, gen)
		}
		orig := *d
		d.Status.ReadyReplicas = 3
		if err := c.Status().Patch(ctx, d, client.MergeFrom(&orig)); err != nil {
			t.Fatalf("status patch: %v", err)
		}
		if d.Status.ReadyReplicas != 3 || d.Generation != gen {
			t.Fatalf("after status patch: %+v", d.Status)
		}

		var sc Scale
		if err := c.SubResource("scale").Get(ctx, d, &sc); err != nil {
			t.Fatalf("get scale: %v", err)
		}
		if sc.Spec.Replicas != 1 || sc.Kind != "Scale" {
			t.Fatalf("scale = %+v", sc)
		}
		sc.Spec.Replicas = 4
		if err := c.SubResource("scale").Update(ctx, d, &sc); err != nil {
			t.Fatalf("update scale: %v", err)
		}
		if sc.Spec.Replicas != 4 {
			t.Fatalf("scale after update = %+v", sc.Spec)
		}
		if err := c.SubResource("scale").Patch(ctx, d, &sc, client.RawPatch(client.MergePatchType, []byte(`{"spec":{"replicas":2}}`))); err != nil {
			t.Fatalf("patch scale: %v", err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas != 2 {
			t.Fatalf("deployment replicas = %d, want 2", *d.Spec.Replicas)
		}
		var dl appsv1.DeploymentList
		if err := c.List(ctx, &dl); err != nil || len(dl.Items) != 1 {
			t.Fatalf("list deployments: %v %d", err, len(dl.Items))
		}
	})

	t.Run("watch", func(t *testing.T) {
		var l corev1.ConfigMapList
		if err := c.List(ctx, &l, client.InNamespace("default")); err != nil {
			t.Fatal(err)
		}
		w, err := c.Watch(ctx, &corev1.ConfigMapList{}, client.InNamespace("default"),
			client.ResourceVersion(l.ResourceVersion), client.MatchingLabels{"w": "1"})
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		defer w.Stop()
		cm := configMap("watched", map[string]string{"w": "1"})
		if err := c.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		cm.Data["k"] = "changed"
		if err := c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, cm); err != nil {
			t.Fatal(err)
		}
		var types []client.EventType
		timeout := time.After(10 * time.Second)
		for len(types) < 3 {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					t.Fatalf("watch closed early after %v", types)
				}
				if ev.Type == client.Bookmark {
					continue
				}
				if ev.Err != nil {
					t.Fatalf("watch error: %v", ev.Err)
				}
				got, ok := ev.Object.(*corev1.ConfigMap)
				if !ok || got.Name != "watched" {
					t.Fatalf("event object = %#v", ev.Object)
				}
				types = append(types, ev.Type)
			case <-timeout:
				t.Fatalf("timed out; events so far %v", types)
			}
		}
		if diff := cmp.Diff([]client.EventType{client.Added, client.Modified, client.Deleted}, types); diff != "" {
			t.Fatalf("events (-want +got):\n%s", diff)
		}
		w.Stop()
		if _, ok := <-w.ResultChan(); ok {
			t.Fatal("channel open after Stop")
		}
	})

	t.Run("watch too old resourceVersion", func(t *testing.T) {
		w, err := c.Watch(ctx, &api.UnstructuredList{APIVersion: "v1", Kind: "ConfigMapList"}, client.ResourceVersion("1"))
		if err != nil {
			if !apierrors.IsGone(err) {
				t.Fatalf("watch: %v", err)
			}
			return
		}
		defer w.Stop()
		// Either replayed events or an ERROR event; both are fine as long as
		// errors come out typed.
		select {
		case ev := <-w.ResultChan():
			if ev.Type == client.Error && !apierrors.IsGone(ev.Err) {
				t.Fatalf("error event: %v", ev.Err)
			}
		case <-time.After(2 * time.Second):
		}
	})

	t.Run("restmapper", func(t *testing.T) {
		m, ok := c.RESTMapper().(*restmapper.Mapper)
		if !ok {
			t.Fatalf("default mapper is %T", c.RESTMapper())
		}
		mp, err := m.RESTMapping(ctx, api.GroupVersionKind{Group: "coordination.k8s.io", Version: "v1", Kind: "Lease"})
		if err != nil {
			t.Fatalf("lease mapping: %v", err)
		}
		if mp.Resource.Resource != "leases" || !mp.Namespaced {
			t.Fatalf("lease mapping = %+v", mp)
		}
		ns, err := m.ResourceFor(ctx, "ns")
		if err != nil || ns.Kind.Kind != "Namespace" || ns.Namespaced {
			t.Fatalf("ResourceFor(ns) = %+v, %v", ns, err)
		}
		dep, err := m.ResourceFor(ctx, "deployments.apps")
		if err != nil || dep.Kind != appsGV.WithKind("Deployment") {
			t.Fatalf("ResourceFor(deployments.apps) = %+v, %v", dep, err)
		}
		_, err = m.RESTMapping(ctx, api.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nope"})
		if !restmapper.IsNoMatch(err) {
			t.Fatalf("unknown kind: %v", err)
		}
	})

	t.Run("unregistered type", func(t *testing.T) {
		err := c.Get(ctx, client.ObjectKey{Name: "x"}, &corev1.Secret{})
		if !errors.Is(err, scheme.ErrNotRegistered) {
			t.Fatalf("err = %v, want ErrNotRegistered", err)
		}
	})
}
