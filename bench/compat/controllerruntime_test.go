package compat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/testenv"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const leaseName = "converge-compat-leader"

// secretReconciler keeps one Secret, controlled by the ConfigMap, per
// ConfigMap. It writes no status.
type secretReconciler struct {
	client.Client
}

func (r *secretReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := r.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cm.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cm.Name + "-secret", Namespace: cm.Namespace}}
	err := r.Get(ctx, client.ObjectKeyFromObject(secret), secret)
	if err == nil || !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	secret.StringData = nil
	secret.Data = map[string][]byte{"from": []byte(cm.Name)}
	if err := controllerutil.SetControllerReference(&cm, secret, r.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestControllerRuntimeManager runs a controller-runtime manager with leader
// election (a Lease in default) and a For(ConfigMap).Owns(Secret) reconciler,
// all with controller-runtime's default client (protobuf bodies for built-in
// kinds).
func TestControllerRuntimeManager(t *testing.T) {
	env := testenv.StartT(t, testenv.Options{})
	cfg, log := traced(t, env)

	logs := &syncBuffer{}
	ctrl.SetLogger(zap.New(zap.UseDevMode(true), zap.WriteTo(logs)))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("controller-runtime log:\n%s", logs.String())
		}
	})

	scheme := clientgoscheme.Scheme
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              leaseName,
		LeaderElectionNamespace:       "default",
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Owns(&corev1.Secret{}).
		Complete(&secretReconciler{Client: mgr.GetClient()}); err != nil {
		t.Fatalf("build controller: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(ctx) }()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-mgrDone:
			return err
		case <-time.After(30 * time.Second):
			return errors.New("manager did not stop within 30s")
		}
	}
	t.Cleanup(func() { _ = stop() })

	// A separate, uncached controller-runtime client for the test's own
	// reads and writes (default content type as well).
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	tctx := t.Context()

	select {
	case <-mgr.Elected():
	case err := <-mgrDone:
		t.Fatalf("manager stopped before it was elected: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("manager not elected leader within 30s")
	}
	var lease coordinationv1.Lease
	if err := c.Get(tctx, types.NamespacedName{Namespace: "default", Name: leaseName}, &lease); err != nil {
		t.Fatalf("get lease: %v", err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Fatalf("lease has no holder: %+v", lease.Spec)
	}
	holder := *lease.Spec.HolderIdentity
	t.Logf("lease %s/%s held by %q (duration %ds)", lease.Namespace, lease.Name, holder, deref(lease.Spec.LeaseDurationSeconds))

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "compat-cr"}}
	if err := c.Create(tctx, ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns.Name}, Data: map[string]string{"k": "v"}}
	if err := c.Create(tctx, cm); err != nil {
		t.Fatalf("create configmap: %v", err)
	}

	key := types.NamespacedName{Namespace: ns.Name, Name: "owner-secret"}
	var secret corev1.Secret
	eventually(t, 20*time.Second, "the reconciler to create the Secret", func() (bool, error) {
		err := c.Get(tctx, key, &secret)
		return err == nil, err
	})
	if err := checkOwner(&secret, cm); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["from"]) != "owner" {
		t.Errorf("secret data = %q, want from=owner", secret.Data)
	}

	// Deleting the owned Secret must trigger a reconcile (Owns) that recreates it.
	firstUID := secret.UID
	if err := c.Delete(tctx, &secret); err != nil {
		t.Fatalf("delete secret: %v", err)
	}
	eventually(t, 20*time.Second, "the reconciler to recreate the deleted Secret", func() (bool, error) {
		err := c.Get(tctx, key, &secret)
		return err == nil && secret.UID != firstUID, err
	})
	if err := checkOwner(&secret, cm); err != nil {
		t.Fatal(err)
	}

	// The manager renews the lease (a protobuf PUT every RetryPeriod, 2s by
	// default) and keeps holding it ...
	acquired := lease.Spec.RenewTime
	eventually(t, 15*time.Second, "the manager to renew its lease", func() (bool, error) {
		if err := c.Get(tctx, types.NamespacedName{Namespace: "default", Name: leaseName}, &lease); err != nil {
			return false, err
		}
		return lease.Spec.RenewTime != nil && acquired != nil && lease.Spec.RenewTime.After(acquired.Time), nil
	})
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != holder {
		t.Errorf("lease holder changed to %v, want %q", lease.Spec.HolderIdentity, holder)
	}
	// ... and releases it on shutdown (LeaderElectionReleaseOnCancel).
	if err := stop(); err != nil {
		t.Fatalf("manager stopped with error: %v", err)
	}
	if err := c.Get(tctx, types.NamespacedName{Namespace: "default", Name: leaseName}, &lease); err != nil {
		t.Fatalf("get lease after stop: %v", err)
	}
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("lease still held by %q after the manager released it", *h)
	}

	// The manager's writes went out as protobuf.
	for _, path := range []string{"/apis/coordination.k8s.io/v1/namespaces/default/leases", "/api/v1/namespaces/compat-cr/secrets"} {
		if n := log.count(func(e exchange) bool {
			return e.Method == "POST" && strings.SplitN(e.URL, "?", 2)[0] == path && e.ReqType == protobuf
		}); n == 0 {
			t.Errorf("no protobuf POST to %s was recorded", path)
		}
	}
}

func checkOwner(secret *corev1.Secret, cm *corev1.ConfigMap) error {
	for _, ref := range secret.OwnerReferences {
		if ref.UID == cm.UID {
			if ref.APIVersion != "v1" || ref.Kind != "ConfigMap" || ref.Name != cm.Name ||
				ref.Controller == nil || !*ref.Controller || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
				return fmt.Errorf("secret owner reference = %+v, want the controller reference of ConfigMap %s", ref, cm.Name)
			}
			return nil
		}
	}
	return fmt.Errorf("secret has no owner reference to ConfigMap %s (uid %s): %+v", cm.Name, cm.UID, secret.OwnerReferences)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
