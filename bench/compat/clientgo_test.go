package compat

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

const protobuf = "application/vnd.kubernetes.protobuf"

// TestClientGoTypedClientset drives a client-go typed clientset with its
// default content type (protobuf request bodies) through create, get,
// update, list and delete of a ConfigMap and a Deployment.
func TestClientGoTypedClientset(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg, log := traced(t, env)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := createNamespace(t, cs, "compat-clientgo")

	t.Run("ConfigMap", func(t *testing.T) {
		cms := cs.CoreV1().ConfigMaps(ns)
		cm, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "cm1", Labels: map[string]string{"app": "compat"}},
			Data:       map[string]string{"k": "v1"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if cm.UID == "" || cm.ResourceVersion == "" || cm.Data["k"] != "v1" {
			t.Fatalf("create returned %+v", cm)
		}
		got, err := cms.Get(ctx, "cm1", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if got.UID != cm.UID || got.Data["k"] != "v1" || got.Labels["app"] != "compat" {
			t.Fatalf("get returned %+v", got)
		}
		got.Data["k"] = "v2"
		got.Data["new"] = "x"
		upd, err := cms.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if upd.Data["k"] != "v2" || upd.Data["new"] != "x" || upd.ResourceVersion == got.ResourceVersion {
			t.Fatalf("update returned %+v (old rv %s)", upd, got.ResourceVersion)
		}
		// A stale resourceVersion must conflict.
		got.Data["k"] = "stale"
		if _, err := cms.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
			t.Fatalf("update with a stale resourceVersion: got %v, want a Conflict", err)
		}
		list, err := cms.List(ctx, metav1.ListOptions{LabelSelector: "app=compat"})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "cm1" || list.ResourceVersion == "" {
			t.Fatalf("list returned %d items (rv %q): %+v", len(list.Items), list.ResourceVersion, list.Items)
		}
		// Typed Delete sends a protobuf DeleteOptions body: a UID precondition
		// that does not match must be honoured (409) ...
		wrongUID := types.UID("00000000-0000-0000-0000-000000000000")
		if err := cms.Delete(ctx, "cm1", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &wrongUID}}); !apierrors.IsConflict(err) {
			t.Fatalf("delete with a wrong UID precondition: got %v, want a Conflict", err)
		}
		// ... and a matching one lets the delete through.
		if err := cms.Delete(ctx, "cm1", metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &cm.UID},
		}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		if _, err := cms.Get(ctx, "cm1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("get after delete: got %v, want NotFound", err)
		}
		if err := cms.Delete(ctx, "cm1", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("second delete: got %v, want NotFound", err)
		}
	})

	t.Run("Deployment", func(t *testing.T) {
		deps := cs.AppsV1().Deployments(ns)
		labels := map[string]string{"app": "web"}
		d, err := deps.Create(ctx, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](2),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Strategy: appsv1.DeploymentStrategy{
					Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{
						MaxUnavailable: ptr.To(intstr.FromString("25%")),
						MaxSurge:       ptr.To(intstr.FromInt32(1)),
					},
				},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name:  "web",
						Image: "nginx:1.27",
						Ports: []corev1.ContainerPort{{ContainerPort: 80}},
						Env:   []corev1.EnvVar{{Name: "A", Value: "1"}},
					}}},
				},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if d.UID == "" || d.Generation != 1 || *d.Spec.Replicas != 2 ||
			d.Spec.Template.Spec.Containers[0].Image != "nginx:1.27" ||
			d.Spec.Strategy.RollingUpdate == nil || d.Spec.Strategy.RollingUpdate.MaxUnavailable.String() != "25%" {
			t.Fatalf("create returned %+v", d)
		}
		got, err := deps.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		got.Spec.Replicas = ptr.To[int32](3)
		got.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
		upd, err := deps.Update(ctx, got, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		if *upd.Spec.Replicas != 3 || upd.Spec.Template.Spec.Containers[0].Image != "nginx:1.28" || upd.Generation != 2 {
			t.Fatalf("update returned replicas=%d image=%s generation=%d, want 3, nginx:1.28, 2",
				*upd.Spec.Replicas, upd.Spec.Template.Spec.Containers[0].Image, upd.Generation)
		}
		list, err := deps.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(list.Items) != 1 || list.Items[0].Name != "web" {
			t.Fatalf("list returned %+v", list.Items)
		}
		if err := deps.Delete(ctx, "web", metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
			t.Fatalf("delete: %v", err)
		}
		eventually(t, 10*time.Second, "the Deployment to be gone", func() (bool, error) {
			_, err := deps.Get(ctx, "web", metav1.GetOptions{})
			return apierrors.IsNotFound(err), err
		})
	})

	// The point of the test: the writes above went out as protobuf.
	for _, m := range []string{"POST", "PUT", "DELETE"} {
		n := log.count(func(e exchange) bool {
			return e.Method == m && strings.HasPrefix(e.ReqType, protobuf) && len(e.ReqBody) > 0
		})
		if n == 0 {
			t.Errorf("no %s request had a protobuf body: the test did not exercise the default content type", m)
		}
	}
}

// TestClientGoSharedInformer checks that a client-go shared informer sees
// ADD, UPDATE and DELETE of ConfigMaps.
func TestClientGoSharedInformer(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg, _ := traced(t, env)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := createNamespace(t, cs, "compat-informer")
	cms := cs.CoreV1().ConfigMaps(ns)
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var events []string
	record := func(s string) { mu.Lock(); events = append(events, s); mu.Unlock() }
	has := func(s string) func() (bool, error) {
		return func() (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range events {
				if e == s {
					return true, nil
				}
			}
			return false, nil
		}
	}

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { record("ADD " + obj.(*corev1.ConfigMap).Name) },
		UpdateFunc: func(old, obj any) {
			o, n := old.(*corev1.ConfigMap), obj.(*corev1.ConfigMap)
			if o.ResourceVersion != n.ResourceVersion {
				record("UPDATE " + n.Name + " " + n.Data["k"])
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			record("DELETE " + obj.(*corev1.ConfigMap).Name)
		},
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() { close(stop); factory.Shutdown() }()
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	eventually(t, 10*time.Second, "ADD before (from the initial list)", has("ADD before"))

	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "live"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "ADD live", has("ADD live"))
	cm.Data["k"] = "2"
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "UPDATE live 2", has("UPDATE live 2"))
	if err := cms.Delete(ctx, "live", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "DELETE live", has("DELETE live"))
	if _, ok, _ := inf.GetStore().GetByKey(ns + "/live"); ok {
		t.Error("the store still holds the deleted ConfigMap")
	}
	if _, ok, _ := inf.GetStore().GetByKey(ns + "/before"); !ok {
		t.Error("the store lost ConfigMap before")
	}
}

func createNamespace(t *testing.T, cs kubernetes.Interface, name string) string {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}
