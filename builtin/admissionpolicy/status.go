package admissionpolicy

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"cel.dev/cel-go/cel"

	"github.com/converge-dev/converge/builtin/admissionpolicy/expr"
	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/builder"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/reconcile"
)

// StatusControllerName is the name of the type-checking controller.
const StatusControllerName = "validatingadmissionpolicy-status"

// SetupStatusController adds the controller that writes each policy's
// status.typeChecking and status.observedGeneration to mgr; resources lists
// the served resources (their Go types or schemas declare the types checked).
func SetupStatusController(mgr *manager.Manager, resources func() []*registry.Resource) error {
	r := &statusReconciler{client: mgr.Client(), resources: resources}
	_, err := builder.ControllerManagedBy(mgr).
		Named(StatusControllerName).
		For(builder.Kind[*admissionregistrationv1.ValidatingAdmissionPolicy]()).
		Build(r)
	if err != nil {
		return fmt.Errorf("%s: %w", StatusControllerName, err)
	}
	return nil
}

type statusReconciler struct {
	client    *client.Client
	resources func() []*registry.Resource
}

// Reconcile type-checks a policy whose observedGeneration is behind.
func (r *statusReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	err := r.client.Get(ctx, req.ObjectKey, p)
	if apierrors.IsNotFound(err) {
		return reconcile.Result{}, nil
	}
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("get validatingadmissionpolicy %s: %w", req.Name, err)
	}
	if p.Status.TypeChecking != nil && p.Status.ObservedGeneration == p.Generation {
		return reconcile.Result{}, nil
	}
	warnings := expr.TypeCheck(admissionregistrationv1.PolicySource(&p.Spec), TypedKinds(&p.Spec, r.resources()))
	tc := &admissionregistrationv1.TypeChecking{}
	for _, w := range warnings {
		tc.ExpressionWarnings = append(tc.ExpressionWarnings, admissionregistrationv1.ExpressionWarning{FieldRef: w.FieldRef, Warning: w.Warning})
	}
	p.Status.TypeChecking, p.Status.ObservedGeneration = tc, p.Generation
	err = r.client.Status().Update(ctx, p)
	switch {
	case apierrors.IsNotFound(err):
		return reconcile.Result{}, nil
	case apierrors.IsConflict(err):
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	case err != nil:
		return reconcile.Result{}, fmt.Errorf("update validatingadmissionpolicy %s status: %w", p.Name, err)
	}
	return reconcile.Result{}, nil
}

// TypedKinds are the declarations to check spec against: one per kind its
// resourceRules name exactly (rules with wildcards are not checked, as in
// Kubernetes), with params typed by paramKind when it is served.
func TypedKinds(spec *admissionregistrationv1.ValidatingAdmissionPolicySpec, resources []*registry.Resource) []expr.Typed {
	if spec.MatchConstraints == nil {
		return nil
	}
	decl := expr.NewDeclaredTypes()
	metaType := decl.FromGo("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", reflectObjectMeta)
	typeOf := func(r *registry.Resource) *cel.Type {
		name := strings.NewReplacer(".", "_", "/", "_").Replace(r.GroupVersion.String()) + "." + r.Kind
		switch {
		case r.Type != nil:
			return decl.FromGo(name, r.Type)
		case r.Schema != nil:
			return decl.FromSchema(name, r.Schema, metaType)
		}
		return nil
	}
	find := func(gvr api.GroupVersionResource) *registry.Resource {
		for _, r := range resources {
			if r.GroupVersionResource() == gvr {
				return r
			}
		}
		return nil
	}
	var params *cel.Type
	if pk := spec.ParamKind; pk != nil {
		if gv, err := api.ParseGroupVersion(pk.APIVersion); err == nil {
			for _, r := range resources {
				if r.GroupVersion == gv && r.Kind == pk.Kind {
					params = typeOf(r)
					break
				}
			}
		}
	}
	var out []expr.Typed
	seen := map[api.GroupVersionResource]bool{}
	for _, rule := range spec.MatchConstraints.ResourceRules {
		if slices.Contains(rule.APIGroups, "*") || slices.Contains(rule.APIVersions, "*") {
			continue
		}
		for _, g := range rule.APIGroups {
			for _, v := range rule.APIVersions {
				for _, res := range rule.Resources {
					gvr := api.GroupVersionResource{Group: g, Version: v, Resource: res}
					if strings.ContainsAny(res, "*/") || seen[gvr] {
						continue
					}
					seen[gvr] = true
					r := find(gvr)
					if r == nil {
						continue
					}
					t := typeOf(r)
					if t == nil {
						continue
					}
					out = append(out, expr.Typed{
						Name:  fmt.Sprintf("%s, Kind=%s", r.GroupVersion, r.Kind),
						Decls: expr.Decls{Object: t, OldObject: t, Params: params, Options: []cel.EnvOption{cel.CustomTypeProvider(decl)}},
					})
				}
			}
		}
	}
	return out
}

var reflectObjectMeta = reflect.TypeFor[api.ObjectMeta]()
