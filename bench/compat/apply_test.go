package compat

import (
	"net/url"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	autoscalingv1ac "k8s.io/client-go/applyconfigurations/autoscaling/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	clientgofeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/converge-dev/converge/testenv"
)

// TestClientGoApply drives client-go's typed Apply, ApplyStatus and
// ApplyScale with apply configurations (protobuf-free JSON apply patches):
// create, a second manager's conflict, Force, and the status and scale
// subresources of a Deployment.
func TestClientGoApply(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg, _ := traced(t, env)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := createNamespace(t, cs, "compat-apply")

	cms := cs.CoreV1().ConfigMaps(ns)
	cm, err := cms.Apply(ctx, corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"a": "1"}),
		metav1.ApplyOptions{FieldManager: "alice"})
	if err != nil {
		t.Fatalf("apply (create): %v", err)
	}
	if cm.Data["a"] != "1" || len(cm.ManagedFields) != 1 || cm.ManagedFields[0].Manager != "alice" ||
		cm.ManagedFields[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("apply returned %+v", cm)
	}
	_, err = cms.Apply(ctx, corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"a": "2"}),
		metav1.ApplyOptions{FieldManager: "bob"})
	if !apierrors.IsConflict(err) {
		t.Fatalf("a second manager changing alice's field: got %v, want a Conflict", err)
	}
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("applied", ns).WithData(map[string]string{"a": "2"}),
		metav1.ApplyOptions{FieldManager: "bob", Force: true})
	if err != nil || cm.Data["a"] != "2" {
		t.Fatalf("forced apply: %v, %+v", err, cm)
	}

	deps := cs.AppsV1().Deployments(ns)
	labels := map[string]string{"app": "applied"}
	dep := appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(1).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithContainers(corev1ac.Container().WithName("c").WithImage("example/web:1")))))
	if _, err := deps.Apply(ctx, dep, metav1.ApplyOptions{FieldManager: "deployer"}); err != nil {
		t.Fatalf("apply deployment: %v", err)
	}
	st, err := deps.ApplyStatus(ctx, appsv1ac.Deployment("web", ns).WithStatus(appsv1ac.DeploymentStatus().
		WithObservedGeneration(7).WithConditions(appsv1ac.DeploymentCondition().
		WithType(appsv1.DeploymentProgressing).WithStatus(corev1.ConditionTrue).WithReason("Compat"))),
		metav1.ApplyOptions{FieldManager: "status-writer", Force: true})
	if err != nil {
		t.Fatalf("apply status: %v", err)
	}
	found := false
	for _, c := range st.Status.Conditions {
		found = found || (c.Type == appsv1.DeploymentProgressing && c.Reason == "Compat")
	}
	if !found {
		t.Fatalf("apply status did not set the condition: %+v", st.Status)
	}
	// The deployer owns spec.replicas: another manager's scale apply conflicts on it.
	_, err = deps.ApplyScale(ctx, "web", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3)),
		metav1.ApplyOptions{FieldManager: "scaler"})
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), ".spec.replicas") {
		t.Fatalf("apply scale over the deployer's replicas: got %v, want a Conflict on .spec.replicas", err)
	}
	sc, err := deps.ApplyScale(ctx, "web", autoscalingv1ac.Scale().WithSpec(autoscalingv1ac.ScaleSpec().WithReplicas(3)),
		metav1.ApplyOptions{FieldManager: "scaler", Force: true})
	if err != nil {
		t.Fatalf("apply scale: %v", err)
	}
	if sc.Spec.Replicas != 3 {
		t.Fatalf("apply scale returned %+v", sc)
	}
	got, err := deps.Get(ctx, "web", metav1.GetOptions{})
	if err != nil || *got.Spec.Replicas != 3 {
		t.Fatalf("after apply scale: %v, %+v", err, got.Spec.Replicas)
	}
	scaler := false
	for _, mf := range got.ManagedFields {
		if mf.Manager == "scaler" {
			scaler = mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "scale" &&
				mf.FieldsV1 != nil && strings.Contains(string(mf.FieldsV1.Raw), `"f:replicas"`)
		}
	}
	if !scaler {
		t.Fatalf("the deployment's managedFields have no Apply entry of scaler for the scale subresource owning replicas: %+v", got.ManagedFields)
	}
}

// TestControllerRuntimeApply uses controller-runtime's client.Apply with a
// client-go apply configuration, as operators moving to server-side apply do.
func TestControllerRuntimeApply(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg, _ := traced(t, env)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := createNamespace(t, cs, "compat-crapply")
	ac := corev1ac.ConfigMap("owned", ns).WithLabels(map[string]string{"team": "x"}).WithData(map[string]string{"k": "v"})
	if err := c.Apply(ctx, ac, client.FieldOwner("operator")); err != nil {
		t.Fatalf("client.Apply: %v", err)
	}
	var cm corev1.ConfigMap
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "owned"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["k"] != "v" || cm.Labels["team"] != "x" {
		t.Fatalf("applied object: %+v", cm)
	}
	// Dropping a field from the applied configuration removes it.
	if err := c.Apply(ctx, corev1ac.ConfigMap("owned", ns).WithData(map[string]string{"k": "v"}), client.FieldOwner("operator")); err != nil {
		t.Fatalf("second client.Apply: %v", err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "owned"}, &cm); err != nil {
		t.Fatal(err)
	}
	if _, ok := cm.Labels["team"]; ok {
		t.Fatalf("the label the operator stopped applying is still there: %+v", cm.Labels)
	}
}

// TestClientGoWatchList runs a shared informer with client-go's
// WatchListClient, on by default since client-go 0.35: its reflector fills the
// store from a streaming list (sendInitialEvents=true, ending with the
// initial-events-end bookmark) instead of a LIST, as against Kubernetes 1.32+.
func TestClientGoWatchList(t *testing.T) {
	if !clientgofeatures.FeatureGates().Enabled(clientgofeatures.WatchListClient) {
		t.Fatal("client-go's WatchListClient gate is off (KUBE_FEATURE_WatchListClient=false in the environment?): this test checks the default")
	}

	env := testenv.StartT(t, testenv.Options{})
	cfg, log := traced(t, env)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	ns := createNamespace(t, cs, "compat-watchlist")
	for _, name := range []string{"a", "b", "c"} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	defer func() { close(stop); factory.Shutdown() }()
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			t.Fatalf("informer for %v did not sync", typ)
		}
	}
	if n := len(inf.GetStore().ListKeys()); n < 3 {
		t.Fatalf("the store holds %d ConfigMaps after sync, want at least 3: %v", n, inf.GetStore().ListKeys())
	}
	cmPath := "/api/v1/namespaces/" + ns + "/configmaps"
	streamed := log.count(func(e exchange) bool {
		u, err := url.Parse(e.URL)
		return err == nil && u.Path == cmPath && u.Query().Get("sendInitialEvents") == "true" && e.Status == 200
	})
	listed := log.count(func(e exchange) bool {
		u, err := url.Parse(e.URL)
		return err == nil && u.Path == cmPath && e.Method == "GET" && u.Query().Get("watch") == ""
	})
	if streamed == 0 || listed != 0 {
		t.Fatalf("the reflector made %d streaming lists and %d LISTs; want a streaming list and no LIST", streamed, listed)
	}
	// client-go's typed clients prefer protobuf; the stream (its initial-events-end
	// bookmark included, or the informer would not have synced) is protobuf, as
	// kube-apiserver answers it.
	proto := log.count(func(e exchange) bool {
		u, err := url.Parse(e.URL)
		return err == nil && u.Path == cmPath && u.Query().Get("sendInitialEvents") == "true" &&
			e.RespType == "application/vnd.kubernetes.protobuf;stream=watch"
	})
	if proto == 0 {
		t.Fatalf("no streaming list was answered as a protobuf watch stream:\n%v", log.exchanges())
	}
	// Changes after the initial state arrive on the same watch.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "d"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "ConfigMap d in the informer's store", func() (bool, error) {
		_, ok, err := inf.GetStore().GetByKey(ns + "/d")
		return ok, err
	})
}
