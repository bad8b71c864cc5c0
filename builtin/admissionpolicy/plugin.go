package admissionpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"cel.dev/cel-go/common/types"
	"github.com/go-logr/logr"
	"github.com/google/uuid"

	"github.com/converge-dev/converge/builtin/admissionpolicy/expr"
	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// Lister reads the objects of a resource (in namespace, or all) from the
// API server's watch cache.
type Lister func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error)

// ParamResource resolves a policy's paramKind to the resource serving it.
type ParamResource func(gv api.GroupVersion, kind string) (gvr api.GroupVersionResource, namespaced bool, ok bool)

// Options configure the plugin.
type Options struct {
	// List reads policies, bindings, parameters and namespaces. Required.
	List Lister
	// Params resolves paramKind. Required for policies with a paramKind.
	Params ParamResource
	// Equivalents lists a resource's other served versions (matchPolicy
	// Equivalent); nil matches exactly.
	Equivalents func(gvr api.GroupVersionResource) []admission.EquivalentResource
	// Authorizer answers the authorizer variable; nil denies every check.
	Authorizer expr.Authorizer
	// Audit records an audit annotation of the request; may be nil.
	Audit func(ctx context.Context, key, value string)
	Log   logr.Logger
}

// Plugin is the ValidatingAdmissionPolicy admission plugin.
type Plugin struct {
	opts Options
	mu   sync.Mutex
	// compiled policies and bindings, by the identity of the cache's data.
	policies map[*byte]*policy
	bindings map[*byte]*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin.
func New(opts Options) *Plugin {
	return &Plugin{opts: opts, policies: map[*byte]*policy{}, bindings: map[*byte]*admissionregistrationv1.ValidatingAdmissionPolicyBinding{}}
}

// policy is a stored policy and its compiled expressions.
type policy struct {
	*admissionregistrationv1.ValidatingAdmissionPolicy
	prog *expr.Policy
	// err is why the policy cannot be evaluated (expressions that do not
	// compile, as stored before a change of the CEL environment).
	err error
}

var (
	policiesGVR = admissionregistrationv1.GroupVersion.WithResource("validatingadmissionpolicies")
	bindingsGVR = admissionregistrationv1.GroupVersion.WithResource("validatingadmissionpolicybindings")
)

// exempt: policies never apply to admission configuration itself, so a bad
// policy can always be removed.
func exempt(a *admission.Attributes) bool {
	if a.Resource.Group != "admissionregistration.k8s.io" {
		return false
	}
	switch a.Resource.Resource {
	case "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
		"validatingadmissionpolicies", "validatingadmissionpolicybindings",
		"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
		return true
	}
	return false
}

func identity(b []byte) *byte {
	if len(b) == 0 {
		return nil
	}
	return unsafe.SliceData(b)
}

// pair is a binding and its policy.
type pair struct {
	policy  *policy
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// load returns the bindings with their policies, in policy then binding name
// order; none (after one cache read) when there is no binding.
func (p *Plugin) load(ctx context.Context) ([]pair, error) {
	braw, _, err := p.opts.List(ctx, bindingsGVR, "")
	if err != nil || len(braw) == 0 {
		return nil, err
	}
	praw, _, err := p.opts.List(ctx, policiesGVR, "")
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	policies := make(map[*byte]*policy, len(praw))
	byName := make(map[string]*policy, len(praw))
	for _, raw := range praw {
		id := identity(raw)
		pol, ok := p.policies[id]
		if !ok {
			pol = compilePolicy(raw)
		}
		policies[id] = pol
		if pol != nil {
			byName[pol.Name] = pol
		}
	}
	bindings := make(map[*byte]*admissionregistrationv1.ValidatingAdmissionPolicyBinding, len(braw))
	var out []pair
	for _, raw := range braw {
		id := identity(raw)
		b, ok := p.bindings[id]
		if !ok {
			b = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			if err := json.Unmarshal(raw, b); err != nil {
				p.opts.Log.Error(err, "Decode ValidatingAdmissionPolicyBinding")
				b = nil
			}
		}
		bindings[id] = b
		if b == nil {
			continue
		}
		if pol := byName[b.Spec.PolicyName]; pol != nil {
			out = append(out, pair{policy: pol, binding: b})
		}
	}
	p.policies, p.bindings = policies, bindings
	slices.SortFunc(out, func(x, y pair) int {
		if c := strings.Compare(x.policy.Name, y.policy.Name); c != 0 {
			return c
		}
		return strings.Compare(x.binding.Name, y.binding.Name)
	})
	return out, nil
}

func compilePolicy(raw []byte) *policy {
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := json.Unmarshal(raw, vap); err != nil {
		return nil
	}
	prog, errs := expr.Compile(admissionregistrationv1.PolicySource(&vap.Spec))
	pol := &policy{ValidatingAdmissionPolicy: vap, prog: prog}
	if len(errs) > 0 {
		pol.err = errs.ToError()
	}
	return pol
}

// decision is a failed validation (or an error under failurePolicy Fail) of
// one binding.
type decision struct {
	policy, binding string
	message         string
	reason          string
	// index of the validation, -1 for errors.
	index int
}

// MayReadManagedFields implements admission.ManagedFieldsScoper: a
// policy's expressions may read the object's managedFields, so the plugin
// may whenever a binding exists (or the bindings cannot be listed).
func (p *Plugin) MayReadManagedFields(ctx context.Context, a *admission.Attributes) bool {
	if exempt(a) {
		return false
	}
	bindings, _, err := p.opts.List(ctx, bindingsGVR, "")
	return err != nil || len(bindings) > 0
}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if exempt(a) {
		return nil
	}
	pairs, err := p.load(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list validating admission policies: %w", err))
	}
	if len(pairs) == 0 {
		return nil
	}
	r := &requestState{plugin: p, ctx: ctx, a: a}
	var denied []decision
	for _, pr := range pairs {
		denied = append(denied, r.evaluate(pr)...)
	}
	r.publishAudit()
	if len(denied) == 0 {
		return nil
	}
	return deny(a, denied[0])
}

// deny is the error of a denied request, as Kubernetes words it.
func deny(a *admission.Attributes, d decision) error {
	msg := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", d.policy, d.binding, d.message)
	gr := api.GroupResource{Group: a.Resource.Group, Resource: a.Resource.Resource}
	name := a.Name
	var full string
	if name == "" {
		full = fmt.Sprintf("%s is forbidden: %s", gr, msg)
	} else {
		full = fmt.Sprintf("%s %q is forbidden: %s", gr, name, msg)
	}
	reason := d.reason
	if reason == "" {
		reason = apierrors.ReasonInvalid
	}
	code := map[string]int32{
		apierrors.ReasonUnauthorized: http.StatusUnauthorized, apierrors.ReasonForbidden: http.StatusForbidden,
		apierrors.ReasonInvalid: http.StatusUnprocessableEntity, apierrors.ReasonRequestEntityTooLarge: http.StatusRequestEntityTooLarge,
	}[reason]
	if code == 0 {
		code = http.StatusUnprocessableEntity
	}
	return &apierrors.StatusError{ErrStatus: api.Status{
		Status: api.StatusFailure, Code: code, Reason: reason, Message: full,
		Details: &api.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource, Causes: []api.StatusCause{{Message: msg}}},
	}}
}

// requestState is the per-request state shared by the bindings evaluated.
type requestState struct {
	plugin *Plugin
	ctx    context.Context
	a      *admission.Attributes

	nsDone bool
	ns     map[string]any
	nsErr  error

	request map[string]any
	// audit annotations (key → value) and validation failures to publish.
	audit    map[string]string
	failures []map[string]any
}

// namespace reads the request's namespace object once.
func (r *requestState) namespace() (map[string]any, error) {
	if r.nsDone {
		return r.ns, r.nsErr
	}
	r.nsDone = true
	items, _, err := r.plugin.opts.List(r.ctx, api.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "")
	if err != nil {
		r.nsErr = err
		return nil, err
	}
	for _, raw := range items {
		var meta struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		if json.Unmarshal(raw, &meta) != nil || meta.Metadata.Name != r.a.Namespace {
			continue
		}
		ns, err := api.DecodeMap(raw)
		if err != nil {
			r.nsErr = err
			return nil, err
		}
		if md, ok := ns["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
		r.ns = ns
		return ns, nil
	}
	r.nsErr = fmt.Errorf("namespace %q not found", r.a.Namespace)
	return nil, r.nsErr
}

func (r *requestState) nsLabels() (map[string]string, error) {
	ns, err := r.namespace()
	if err != nil {
		return nil, err
	}
	return api.NestedStringMap(ns, "metadata", "labels"), nil
}

// requestFor is the request variable for a (converted to eq's version when
// a policy matched through an equivalent resource).
func (r *requestState) requestFor(a *admission.Attributes) map[string]any {
	gvk := func(k api.GroupVersionKind) map[string]any {
		return map[string]any{"group": k.Group, "version": k.Version, "kind": k.Kind}
	}
	gvr := func(k api.GroupVersionResource) map[string]any {
		return map[string]any{"group": k.Group, "version": k.Version, "resource": k.Resource}
	}
	ui := map[string]any{"username": "", "groups": []string{}}
	if u := r.a.User; u != nil {
		groups := u.Groups
		if groups == nil {
			groups = []string{}
		}
		ui = map[string]any{"username": u.Name, "uid": u.UID, "groups": groups}
		if len(u.Extra) > 0 {
			ui["extra"] = u.Extra
		}
	}
	opts := map[admission.Operation]string{admission.Create: "CreateOptions", admission.Update: "UpdateOptions", admission.Delete: "DeleteOptions"}
	req := map[string]any{
		"uid": uuid.NewString(), "kind": gvk(a.Kind), "resource": gvr(a.Resource), "subResource": a.Subresource,
		"requestKind": gvk(r.a.Kind), "requestResource": gvr(r.a.Resource), "requestSubResource": r.a.Subresource,
		"name": a.Name, "namespace": a.Namespace, "operation": string(a.Operation), "userInfo": ui, "dryRun": a.DryRun,
	}
	if k, ok := opts[a.Operation]; ok {
		req["options"] = map[string]any{"kind": k, "apiVersion": "meta.k8s.io/v1"}
	}
	return req
}

// evaluate applies one binding to the request and returns its Deny decisions
// (Warn and Audit are applied here).
func (r *requestState) evaluate(pr pair) []decision {
	pol, b := pr.policy, pr.binding
	failPolicy := "Fail"
	if fp := pol.Spec.FailurePolicy; fp != nil {
		failPolicy = *fp
	}
	configError := func(err error) []decision {
		if failPolicy == "Ignore" {
			return nil
		}
		return []decision{{policy: pol.Name, binding: b.Name, message: err.Error(), index: -1}}
	}
	req := &request{Attributes: r.a, nsLabels: r.nsLabels}
	if eqs := r.plugin.opts.Equivalents; eqs != nil {
		req.equivalents = func() []admission.EquivalentResource { return eqs(r.a.Resource) }
	}
	if pol.Spec.MatchConstraints == nil {
		return nil
	}
	m, ok, err := matches(pol.Spec.MatchConstraints, req)
	if err != nil {
		return configError(fmt.Errorf("failed to match policy: %w", err))
	}
	if !ok {
		return nil
	}
	if _, ok, err := matches(b.Spec.MatchResources, req); err != nil {
		return configError(fmt.Errorf("failed to match binding: %w", err))
	} else if !ok {
		return nil
	}
	if pol.err != nil {
		return configError(fmt.Errorf("policy does not compile: %w", pol.err))
	}
	a := r.a
	if m.eq != nil {
		conv, err := convertTo(a, m.eq)
		if err != nil {
			return configError(fmt.Errorf("failed to convert object version: %w", err))
		}
		a = conv
	}
	params, err := r.params(pol, b)
	if err != nil {
		return configError(err)
	}
	if params == nil {
		// No parameter object and parameterNotFoundAction Allow.
		return nil
	}
	var nsObj map[string]any
	if a.Namespace != "" && !(a.Resource.Group == "" && a.Resource.Resource == "namespaces") {
		if nsObj, err = r.namespace(); err != nil {
			return configError(err)
		}
	}
	var out []decision
	for _, param := range params {
		in := expr.Input{Object: a.Object, OldObject: a.OldObject, Params: param, NamespaceObject: nsObj,
			Request: r.requestFor(a), Authorizer: r.plugin.opts.Authorizer}
		out = append(out, r.validate(pol, b, failPolicy, in)...)
	}
	return out
}

// noParams is the params of a policy without paramKind: one evaluation with
// params null.
var noParams = []map[string]any{nil}

// params returns the parameter objects a binding selects: one nil entry for a
// policy without paramKind, nil (skip) when none is found and
// parameterNotFoundAction is Allow; an error (Deny, or a configuration
// error) otherwise.
func (r *requestState) params(pol *policy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) ([]map[string]any, error) {
	pk := pol.Spec.ParamKind
	if pk == nil {
		return noParams, nil
	}
	ref := b.Spec.ParamRef
	if ref == nil {
		return nil, fmt.Errorf("paramKind %s %s is set but the binding has no paramRef", pk.APIVersion, pk.Kind)
	}
	gv, err := api.ParseGroupVersion(pk.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("paramKind apiVersion %q: %w", pk.APIVersion, err)
	}
	if r.plugin.opts.Params == nil {
		return nil, errors.New("no parameter resources configured")
	}
	gvr, namespaced, ok := r.plugin.opts.Params(gv, pk.Kind)
	if !ok {
		return nil, fmt.Errorf("failed to find resource referenced by paramKind: '%s, Kind=%s'", gv, pk.Kind)
	}
	namespace := ""
	if namespaced {
		namespace = ref.Namespace
		if namespace == "" {
			namespace = r.a.Namespace
		}
		if namespace == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	}
	items, _, err := r.plugin.opts.List(r.ctx, gvr, namespace)
	if err != nil {
		return nil, fmt.Errorf("list params: %w", err)
	}
	var sel labels.Selector
	if ref.Selector != nil {
		if sel, err = labels.FromLabelSelector(ref.Selector); err != nil {
			return nil, fmt.Errorf("paramRef selector: %w", err)
		}
	}
	var out []map[string]any
	for _, raw := range items {
		obj, err := api.DecodeMap(raw)
		if err != nil {
			return nil, fmt.Errorf("decode param: %w", err)
		}
		if ref.Name != "" && ref.Name != "*" && api.NestedString(obj, "metadata", "name") != ref.Name {
			continue
		}
		if sel != nil && !sel.Matches(api.NestedStringMap(obj, "metadata", "labels")) {
			continue
		}
		if md, ok := obj["metadata"].(map[string]any); ok {
			delete(md, "managedFields")
		}
		out = append(out, obj)
	}
	if len(out) > 0 {
		return out, nil
	}
	if a := ref.ParameterNotFoundAction; a != nil && *a == "Allow" {
		return nil, nil
	}
	return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
}

// validate evaluates the policy's matchConditions, validations and
// auditAnnotations for one parameter object.
func (r *requestState) validate(pol *policy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, failPolicy string, in expr.Input) []decision {
	act := pol.prog.Activation(r.ctx, in)
	onError := func(msg string) []decision {
		if failPolicy == "Ignore" {
			return nil
		}
		return r.act(pol, b, []decision{{policy: pol.Name, binding: b.Name, message: msg, index: -1}})
	}
	// matchConditions: any false skips; errors without a false apply the
	// failure policy.
	var condErrs []string
	for _, mc := range pol.prog.MatchConditions {
		v, err := mc.Eval(act)
		if err != nil {
			condErrs = append(condErrs, fmt.Sprintf("failed to evaluate matchCondition %q: %v", mc.Name, err))
			continue
		}
		if v == types.False {
			return nil
		}
		if v != types.True {
			condErrs = append(condErrs, fmt.Sprintf("matchCondition %q evaluated to %v, not a bool", mc.Name, v.Value()))
		}
	}
	if len(condErrs) > 0 {
		return onError(strings.Join(condErrs, "; "))
	}
	var failed []decision
	for i, v := range pol.prog.Validations {
		spec := pol.Spec.Validations[i]
		out, err := v.Eval(act)
		if err != nil {
			if failPolicy != "Ignore" {
				failed = append(failed, decision{policy: pol.Name, binding: b.Name, index: i,
					message: fmt.Sprintf("expression '%s' resulted in error: %v", strings.TrimSpace(spec.Expression), err)})
			}
			continue
		}
		if out == types.True {
			continue
		}
		d := decision{policy: pol.Name, binding: b.Name, index: i, reason: apierrors.ReasonInvalid}
		if spec.Reason != nil {
			d.reason = *spec.Reason
		}
		if me := pol.prog.Messages[i]; me != nil {
			if mv, err := me.Eval(act); err == nil {
				if s, ok := mv.Value().(string); ok {
					s = strings.TrimSpace(s)
					if len(s) <= 5*1024 && !strings.Contains(s, "\n") {
						d.message = s
					}
				}
			}
		}
		if d.message == "" {
			d.message = strings.TrimSpace(spec.Message)
		}
		if d.message == "" {
			d.message = "failed expression: " + strings.TrimSpace(spec.Expression)
		}
		failed = append(failed, d)
	}
	for _, aa := range pol.prog.AuditAnnotations {
		out, err := aa.Eval(act)
		if err != nil {
			if failPolicy != "Ignore" {
				failed = append(failed, decision{policy: pol.Name, binding: b.Name, index: -1,
					message: fmt.Sprintf("valueExpression '%v' resulted in error: %v", aa.Expression, err)})
			}
			continue
		}
		s, ok := out.Value().(string)
		if !ok || s == "" {
			continue
		}
		if len(s) > 10*1024 {
			s = s[:10*1024]
		}
		r.addAudit(pol.Name+"/"+aa.Name, s)
	}
	return r.act(pol, b, failed)
}

// act applies the binding's validationActions to failed validations and
// returns those to deny with.
func (r *requestState) act(pol *policy, b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, failed []decision) []decision {
	var deny []decision
	for _, d := range failed {
		for _, action := range b.Spec.ValidationActions {
			switch action {
			case admissionregistrationv1.ActionDeny:
				deny = append(deny, d)
			case admissionregistrationv1.ActionWarn:
				admission.AddWarning(r.ctx, fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': %s", pol.Name, b.Name, d.message))
			case admissionregistrationv1.ActionAudit:
				f := map[string]any{"message": d.message, "policy": pol.Name, "binding": b.Name, "validationActions": b.Spec.ValidationActions}
				if d.index >= 0 {
					f["expressionIndex"] = d.index
				}
				r.failures = append(r.failures, f)
			}
		}
	}
	return deny
}

func (r *requestState) addAudit(key, value string) {
	if r.audit == nil {
		r.audit = map[string]string{}
	}
	if _, ok := r.audit[key]; !ok {
		r.audit[key] = value
	}
}

// ValidationFailureAnnotation is the audit annotation listing the failed
// validations of bindings with the Audit action.
const ValidationFailureAnnotation = "validation.policy.admission.k8s.io/validation_failure"

func (r *requestState) publishAudit() {
	rec := r.plugin.opts.Audit
	if rec == nil {
		return
	}
	for k, v := range r.audit {
		rec(r.ctx, k, v)
	}
	if len(r.failures) > 0 {
		if b, err := json.Marshal(r.failures); err == nil {
			rec(r.ctx, ValidationFailureAnnotation, string(b))
		}
	}
}

// convertTo is a converted to eq's version (matchPolicy Equivalent).
func convertTo(a *admission.Attributes, eq *admission.EquivalentResource) (*admission.Attributes, error) {
	b := *a
	b.Resource, b.Kind = eq.Resource, eq.Kind
	for _, o := range []*map[string]any{&b.Object, &b.OldObject} {
		if *o == nil {
			continue
		}
		c, err := eq.Convert(api.DeepCopyJSON(*o), eq.Resource.GroupVersion())
		if err != nil {
			return nil, err
		}
		*o = c
	}
	return &b, nil
}
