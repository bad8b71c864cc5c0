package operators

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/restmapper"
	"github.com/converge-dev/converge/framework/manager"
)

// DefaultEstablishTimeout bounds how long ApplyCRDs waits for Established.
const DefaultEstablishTimeout = 30 * time.Second

// CRDGroupVersionKind is the kind of the documents Operator.CRDs returns.
var CRDGroupVersionKind = api.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// ErrSetupPanic wraps a panic recovered from an operator's Setup.
var ErrSetupPanic = errors.New("operators: Setup panicked")

// Install runs the start-up sequence shared by every host: ApplyCRDs, then
// Setup (panics recovered, see SafeSetup), then the operator's HealthChecks.
// Errors name the operator.
func Install(ctx context.Context, mgr *manager.Manager, op Operator) error {
	return InstallWith(ctx, mgr, op, InstallOptions{})
}

// InstallOptions add steps to Install, for hosts that serve webhooks
// (operators/webhook).
type InstallOptions struct {
	// PrepareCRDs edits the operator's parsed CRDs before they are applied
	// (the webhook host points spec.conversion at its conversion webhooks).
	PrepareCRDs func(crds []*api.Unstructured) error
	// BeforeSetup runs once the CRDs are Established and mapped, before Setup
	// (the webhook host registers its admission webhooks).
	BeforeSetup func(ctx context.Context) error
}

// InstallWith is Install with the extra steps of opts.
func InstallWith(ctx context.Context, mgr *manager.Manager, op Operator, opts InstallOptions) error {
	name := op.Name()
	crds, err := ParseCRDs(op.CRDs())
	if err == nil && opts.PrepareCRDs != nil {
		err = opts.PrepareCRDs(crds)
	}
	if err == nil {
		err = ApplyCRDObjects(ctx, mgr.Client(), crds, DefaultEstablishTimeout)
	}
	if err != nil {
		return fmt.Errorf("operator %s: %w", name, err)
	}
	if opts.BeforeSetup != nil {
		if err := opts.BeforeSetup(ctx); err != nil {
			return fmt.Errorf("operator %s: %w", name, err)
		}
	}
	if err := SafeSetup(op, mgr); err != nil {
		return fmt.Errorf("operator %s: setup: %w", name, err)
	}
	if hc, ok := op.(HealthChecks); ok {
		checks := hc.HealthChecks()
		for _, k := range slices.Sorted(maps.Keys(checks)) {
			if err := mgr.AddHealthzCheck(name+"-"+k, checks[k]); err != nil {
				return fmt.Errorf("operator %s: health check %s: %w", name, k, err)
			}
		}
	}
	return nil
}

// SafeSetup calls op.Setup(mgr) and turns a panic into an error wrapping
// ErrSetupPanic (with the panic value and stack), so a faulty operator cannot
// bring its host down during start-up. Panics in its reconcilers are already
// recovered by the controller workers.
func SafeSetup(op Operator, mgr *manager.Manager) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v\n%s", ErrSetupPanic, r, debug.Stack())
		}
	}()
	return op.Setup(mgr)
}

// ParseCRDs decodes CRD documents (YAML or JSON; a document may hold several
// objects separated by "---") into unstructured objects and checks that each
// is a CustomResourceDefinition with a name.
func ParseCRDs(docs [][]byte) ([]*api.Unstructured, error) {
	var out []*api.Unstructured
	for i, doc := range docs {
		for _, part := range splitYAML(doc) {
			js, err := yaml.YAMLToJSON(part)
			if err != nil {
				return nil, fmt.Errorf("crd document %d: %w", i, err)
			}
			m, err := api.DecodeMap(js)
			if err != nil {
				return nil, fmt.Errorf("crd document %d: %w", i, err)
			}
			if m == nil {
				continue
			}
			u := &api.Unstructured{Object: m}
			if gvk := u.GroupVersionKind(); gvk != CRDGroupVersionKind {
				return nil, fmt.Errorf("crd document %d: kind %s, want %s", i, gvk, CRDGroupVersionKind)
			}
			if u.GetName() == "" {
				return nil, fmt.Errorf("crd document %d: metadata.name is empty", i)
			}
			out = append(out, u)
		}
	}
	return out, nil
}

func splitYAML(doc []byte) [][]byte {
	var parts [][]byte
	for _, p := range bytes.Split(append([]byte("\n"), doc...), []byte("\n---")) {
		if len(bytes.TrimSpace(p)) > 0 {
			parts = append(parts, p)
		}
	}
	return parts
}

// ApplyCRDs creates each CRD (or updates its spec when it exists) through c
// and waits until all of them are Established, or timeout (0: the default)
// passes, or ctx ends. The error of a CRD that is not established names its
// last conditions.
func ApplyCRDs(ctx context.Context, c *client.Client, docs [][]byte, timeout time.Duration) error {
	crds, err := ParseCRDs(docs)
	if err != nil {
		return err
	}
	return ApplyCRDObjects(ctx, c, crds, timeout)
}

// ApplyCRDObjects is ApplyCRDs of CRDs already parsed (ParseCRDs).
// A write the server answers with a transient error (429, 5xx, a timeout, a
// conflict with a concurrent writer) is retried until timeout.
func ApplyCRDObjects(ctx context.Context, c *client.Client, crds []*api.Unstructured, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = DefaultEstablishTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, crd := range crds {
		if err := retryTransient(ctx, func() error { return applyCRD(ctx, c, crd) }); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := waitEstablished(ctx, c, crd.GetName()); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := waitMapped(ctx, c, crd); err != nil {
			return err
		}
	}
	return nil
}

// waitMapped waits until the client's RESTMapper maps every served version
// of crd's kind, so that the operator's informers and writes find it at once
// (a discovery-based mapper may have read discovery just before the CRD was
// served).
func waitMapped(ctx context.Context, c *client.Client, crd *api.Unstructured) error {
	spec := api.NestedMap(crd.Object, "spec")
	group, kind := api.NestedString(spec, "group"), api.NestedString(spec, "names", "kind")
	for _, v := range api.NestedSlice(spec, "versions") {
		m, _ := v.(map[string]any)
		if served, _ := m["served"].(bool); !served {
			continue
		}
		gvk := api.GroupVersionKind{Group: group, Version: api.NestedString(m, "name"), Kind: kind}
		for {
			_, err := c.RESTMapper().RESTMapping(ctx, gvk)
			if err == nil {
				break
			}
			if !restmapper.IsNoMatch(err) {
				return fmt.Errorf("map %s: %w", gvk, err)
			}
			if r, ok := c.RESTMapper().(interface{ Reset() }); ok {
				r.Reset()
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("crd %s established but %s not in discovery: %w", crd.GetName(), gvk, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// retryTransient calls f until it succeeds, fails with an error that is not
// transient, or ctx ends (then the last error is returned).
func retryTransient(ctx context.Context, f func() error) error {
	delay := 100 * time.Millisecond
	for {
		err := f()
		if err == nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// transient reports whether a write failed for a reason that may pass:
// overload, a server-side timeout or error, or a concurrent writer.
func transient(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.ReasonForError(err) == apierrors.ReasonServerTimeout || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsConflict(err)
}

func applyCRD(ctx context.Context, c *client.Client, crd *api.Unstructured) error {
	name := crd.GetName()
	err := c.Create(ctx, crd.DeepCopy())
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create crd %s: %w", name, err)
	}
	live := newCRD()
	if err := c.Get(ctx, client.ObjectKey{Name: name}, live); err != nil {
		return fmt.Errorf("get crd %s: %w", name, err)
	}
	live.Object["spec"] = crd.Object["spec"]
	if err := c.Update(ctx, live); err != nil {
		return fmt.Errorf("update crd %s: %w", name, err)
	}
	return nil
}

func newCRD() *api.Unstructured {
	return &api.Unstructured{Object: map[string]any{
		"apiVersion": CRDGroupVersionKind.GroupVersion().String(), "kind": CRDGroupVersionKind.Kind,
	}}
}

func waitEstablished(ctx context.Context, c *client.Client, name string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last []any
	for {
		live := newCRD()
		err := c.Get(ctx, client.ObjectKey{Name: name}, live)
		if err == nil {
			last = api.NestedSlice(live.Object, "status", "conditions")
			if conditionTrue(last, "Established") {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("crd %s not established: %w", name, err)
			}
			return fmt.Errorf("crd %s not established (conditions %v): %w", name, last, ctx.Err())
		case <-tick.C:
		}
	}
}

func conditionTrue(conds []any, typ string) bool {
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}
