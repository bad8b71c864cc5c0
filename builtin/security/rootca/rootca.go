package rootca

import (
	"context"
	"fmt"
	"maps"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// Name is the controller's name.
const Name = "root-ca-cert-publisher"

// ConfigMapName and Key name the published ConfigMap and its CA entry.
const (
	ConfigMapName = "kube-root-ca.crt"
	Key           = "ca.crt"
)

// descriptionAnnotation is the annotation Kubernetes puts on the ConfigMap.
const descriptionAnnotation = "kubernetes.io/description"

const description = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters."

// Setup adds the publisher of caPEM to mgr. It reconciles namespaces; an event
// on a kube-root-ca.crt ConfigMap enqueues its namespace.
func Setup(mgr *manager.Manager, caPEM []byte) error {
	if len(caPEM) == 0 {
		return fmt.Errorf("%s: no CA bundle", Name)
	}
	r := &reconciler{read: mgr.Reader(), write: mgr.Client(), ca: string(caPEM)}
	toNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj api.Object) []reconcile.Request {
		if obj.GetName() != ConfigMapName {
			return nil
		}
		return []reconcile.Request{{ObjectKey: client.ObjectKey{Name: obj.GetNamespace()}}}
	})
	err := builder.ControllerManagedBy(mgr).
		Named(Name).
		For(builder.Kind[*corev1.Namespace]()).
		Watches(builder.Kind[*corev1.ConfigMap](), toNamespace).
		Complete(r)
	if err != nil {
		return fmt.Errorf("%s: %w", Name, err)
	}
	return nil
}

// reader reads namespaces and ConfigMaps: the manager's informer cache, which
// the controller's watches fill.
type reader interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
}

// writer writes the ConfigMaps.
type writer interface {
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
}

type reconciler struct {
	read  reader
	write writer
	ca    string
}

// Reconcile creates the namespace's kube-root-ca.crt or resets its data.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	ns := &corev1.Namespace{}
	err := r.read.Get(ctx, client.ObjectKey{Name: req.Name}, ns)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get namespace %s: %w", req.Name, err)
	}
	if ns.DeletionTimestamp != nil || ns.Status.Phase == corev1.NamespaceTerminating {
		return reconcile.Result{}, nil
	}
	want := map[string]string{Key: r.ca}
	cm := &corev1.ConfigMap{}
	err = r.read.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: ConfigMapName}, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Namespace: ns.Name, Name: ConfigMapName,
			Annotations: map[string]string{descriptionAnnotation: description}}, Data: want}
		err = r.write.Create(ctx, cm)
		if err == nil || apierrors.IsAlreadyExists(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			// Exists now, or the namespace started terminating or went away.
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("create configmap %s/%s: %w", ns.Name, ConfigMapName, err)
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("get configmap %s/%s: %w", ns.Name, ConfigMapName, err)
	}
	if maps.Equal(cm.Data, want) && len(cm.BinaryData) == 0 {
		return reconcile.Result{}, nil
	}
	cm.Data, cm.BinaryData = want, nil
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[descriptionAnnotation] = description
	if err := r.write.Update(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("update configmap %s/%s: %w", ns.Name, ConfigMapName, err)
	}
	return reconcile.Result{}, nil
}
