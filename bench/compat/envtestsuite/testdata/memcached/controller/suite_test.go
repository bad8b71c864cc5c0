package controller

// An envtest suite as kubebuilder writes it: it knows nothing of Converge.
// With USE_EXISTING_CLUSTER=true (converge testenv) envtest uses the cluster
// of $KUBECONFIG and still installs the CRDs of CRDDirectoryPaths.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cachev1alpha1 "github.com/converge-dev/converge/bench/compat/envtestsuite/testdata/memcached/api/v1alpha1"
)

var (
	testEnv   *envtest.Environment
	k8sClient client.Client
	cfgReady  = make(chan struct{})
)

func TestMain(m *testing.M) {
	if err := cachev1alpha1.AddToScheme(scheme.Scheme); err != nil {
		panic(err)
	}
	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(os.Getenv("CRD_DIR"))},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := testEnv.Start()
	if err != nil {
		panic(err)
	}
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		panic(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		panic(err)
	}
	if err := (&MemcachedReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme()}).SetupWithManager(mgr); err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if err := mgr.Start(ctx); err != nil {
			panic(err)
		}
	}()
	code := m.Run()
	cancel()
	if err := testEnv.Stop(); err != nil {
		panic(err)
	}
	os.Exit(code)
}

func TestMemcachedBecomesAvailable(t *testing.T) {
	ctx := context.Background()
	m := &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "test-resource", Namespace: "default"}}
	if err := k8sClient.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	if m.Spec.Size == nil || *m.Spec.Size != 1 {
		t.Fatalf("the CRD's default did not apply: %v", m.Spec.Size)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := &cachev1alpha1.Memcached{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(m), got); err == nil &&
			meta.IsStatusConditionTrue(got.Status.Conditions, "Available") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Memcached never became Available")
		}
		time.Sleep(50 * time.Millisecond)
	}
	bad := &cachev1alpha1.Memcached{ObjectMeta: metav1.ObjectMeta{Name: "too-big", Namespace: "default"},
		Spec: cachev1alpha1.MemcachedSpec{Size: ptr.To[int32](9)}}
	if err := k8sClient.Create(ctx, bad); err == nil {
		t.Fatal("size 9 accepted; the CRD says at most 5")
	}
	if err := k8sClient.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
}
