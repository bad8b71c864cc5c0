package limitrange

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/quota"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Annotation records the defaults the plugin set on a pod.
const Annotation = "kubernetes.io/limit-ranger"

// List returns the LimitRanges of a namespace.
type List func(ctx context.Context, namespace string) ([]*corev1.LimitRange, error)

// Admission is the LimitRanger plugin: Admit applies container defaults,
// Validate enforces the bounds.
type Admission struct {
	list List
}

// New returns the plugin reading LimitRanges with list.
func New(list List) *Admission { return &Admission{list: list} }

var (
	_ admission.Mutator        = (*Admission)(nil)
	_ admission.ChangeReporter = (*Admission)(nil)
	_ admission.Validator      = (*Admission)(nil)
)

var (
	podsGR   = api.GroupResource{Resource: "pods"}
	claimsGR = api.GroupResource{Resource: "persistentvolumeclaims"}
)

// supports reports whether a is a request the plugin looks at: pod creates
// (containers cannot change afterwards) and claim creates and updates.
func supports(a *admission.Attributes) bool {
	if a.Subresource != "" || a.Object == nil || a.Namespace == "" {
		return false
	}
	switch a.Resource.GroupResource() {
	case podsGR:
		return a.Operation == admission.Create
	case claimsGR:
		return a.Operation == admission.Create || a.Operation == admission.Update
	}
	return false
}

func (p *Admission) ranges(ctx context.Context, a *admission.Attributes) ([]*corev1.LimitRange, error) {
	lrs, err := p.list(ctx, a.Namespace)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("list limit ranges: %w", err))
	}
	return lrs, nil
}

// MayReadManagedFields implements admission.ManagedFieldsScoper: the
// plugin reads containers' resources and pod overhead, never managedFields.
func (p *Admission) MayReadManagedFields(context.Context, *admission.Attributes) bool { return false }

// MayMutate implements admission.MutationScoper: only new pods are defaulted.
func (p *Admission) MayMutate(_ context.Context, a *admission.Attributes) bool {
	return a.Resource.GroupResource() == podsGR && a.Operation == admission.Create
}

// Admit sets the Container defaults of every LimitRange on a new pod's
// containers and init containers.
func (p *Admission) Admit(ctx context.Context, a *admission.Attributes) error {
	_, err := p.AdmitReport(ctx, a)
	return err
}

// AdmitReport is Admit that also reports whether it changed a.Object
// (admission.ChangeReporter: the server then skips canonicalizing again).
func (p *Admission) AdmitReport(ctx context.Context, a *admission.Attributes) (bool, error) {
	if !supports(a) || a.Resource.GroupResource() != podsGR {
		return false, nil
	}
	lrs, err := p.ranges(ctx, a)
	if err != nil || len(lrs) == 0 {
		return false, err
	}
	pod, err := registry.FromMap[corev1.Pod](a.Object)
	if err != nil {
		return false, apierrors.NewBadRequest(fmt.Sprintf("decode pod: %v", err))
	}
	changed := false
	for _, lr := range lrs {
		if applyDefaults(pod, lr) {
			changed = true
		}
	}
	if !changed {
		return false, nil
	}
	obj, err := registry.ToMap(pod)
	if err != nil {
		return false, apierrors.NewInternalError(fmt.Errorf("encode pod: %w", err))
	}
	a.Object = obj
	return true, nil
}

// applyDefaults sets lr's container defaults on pod and reports whether it
// changed anything.
func applyDefaults(pod *corev1.Pod, lr *corev1.LimitRange) bool {
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypeContainer {
			continue
		}
		for k, v := range item.DefaultRequest {
			requests[k] = v
		}
		for k, v := range item.Default {
			limits[k] = v
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return false
	}
	var notes []string
	merge := func(c *corev1.Container, kind string) {
		var setReq, setLim []string
		for k, v := range limits {
			if _, ok := c.Resources.Limits[k]; !ok {
				if c.Resources.Limits == nil {
					c.Resources.Limits = corev1.ResourceList{}
				}
				c.Resources.Limits[k] = v
				setLim = append(setLim, k)
			}
		}
		for k, v := range requests {
			if _, ok := c.Resources.Requests[k]; !ok {
				if c.Resources.Requests == nil {
					c.Resources.Requests = corev1.ResourceList{}
				}
				c.Resources.Requests[k] = v
				setReq = append(setReq, k)
			}
		}
		if len(setReq) > 0 {
			slices.Sort(setReq)
			notes = append(notes, strings.Join(setReq, ", ")+" request for "+kind+" "+c.Name)
		}
		if len(setLim) > 0 {
			slices.Sort(setLim)
			notes = append(notes, strings.Join(setLim, ", ")+" limit for "+kind+" "+c.Name)
		}
	}
	for i := range pod.Spec.Containers {
		merge(&pod.Spec.Containers[i], "container")
	}
	for i := range pod.Spec.InitContainers {
		merge(&pod.Spec.InitContainers[i], "init container")
	}
	if len(notes) == 0 {
		return false
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[Annotation] = "LimitRanger plugin set: " + strings.Join(notes, "; ")
	return true
}

// Validate refuses a pod or claim outside the bounds of a LimitRange.
func (p *Admission) Validate(ctx context.Context, a *admission.Attributes) error {
	if !supports(a) {
		return nil
	}
	lrs, err := p.ranges(ctx, a)
	if err != nil || len(lrs) == 0 {
		return err
	}
	var errs []error
	switch a.Resource.GroupResource() {
	case podsGR:
		pod, err := registry.FromMap[corev1.Pod](a.Object)
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("decode pod: %v", err))
		}
		for _, lr := range lrs {
			errs = append(errs, validatePod(pod, lr)...)
		}
	case claimsGR:
		claim, err := registry.FromMap[corev1.PersistentVolumeClaim](a.Object)
		if err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("decode persistentvolumeclaim: %v", err))
		}
		for _, lr := range lrs {
			errs = append(errs, validateClaim(claim, lr)...)
		}
	}
	return aggregate(errs)
}

// aggregate joins errors as Kubernetes' error aggregates print: one error
// alone, several as "[a, b]".
func aggregate(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

func validatePod(pod *corev1.Pod, lr *corev1.LimitRange) []error {
	var errs []error
	check := func(t corev1.LimitType, item corev1.LimitRangeItem, requests, limits corev1.ResourceList) {
		for _, k := range quota.Names(item.Min) {
			errs = appendErr(errs, minConstraint(t, k, item.Min[k], requests, limits))
		}
		for _, k := range quota.Names(item.Max) {
			errs = appendErr(errs, maxConstraint(t, k, item.Max[k], requests, limits))
		}
		for _, k := range quota.Names(item.MaxLimitRequestRatio) {
			errs = appendErr(errs, ratioConstraint(t, k, item.MaxLimitRequestRatio[k], requests, limits))
		}
	}
	for _, item := range lr.Spec.Limits {
		switch item.Type {
		case corev1.LimitTypeContainer:
			for _, cs := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
				for i := range cs {
					check(item.Type, item, cs[i].Resources.Requests, cs[i].Resources.Limits)
				}
			}
		case corev1.LimitTypePod:
			check(item.Type, item, quota.PodRequests(pod), quota.PodLimits(pod))
		}
	}
	return errs
}

func validateClaim(claim *corev1.PersistentVolumeClaim, lr *corev1.LimitRange) []error {
	var errs []error
	for _, item := range lr.Spec.Limits {
		if item.Type != corev1.LimitTypePersistentVolumeClaim {
			continue
		}
		requests := claim.Spec.Resources.Requests
		for _, k := range quota.Names(item.Min) {
			// A claim's limits are not user input: only its request counts.
			errs = appendErr(errs, minConstraint(item.Type, k, item.Min[k], requests, corev1.ResourceList{}))
		}
		for _, k := range quota.Names(item.Max) {
			if req, ok := requests[k]; ok && req.Cmp(item.Max[k]) > 0 {
				errs = append(errs, fmt.Errorf("maximum %s usage per %s is %s, but request is %s", k, item.Type, item.Max[k].String(), req.String()))
			}
		}
	}
	return errs
}

func appendErr(errs []error, err error) []error {
	if err != nil {
		return append(errs, err)
	}
	return errs
}

func minConstraint(t corev1.LimitType, name string, enforced api.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	if !hasReq {
		return fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", name, t, enforced.String())
	}
	if req.Cmp(enforced) < 0 {
		return fmt.Errorf("minimum %s usage per %s is %s, but request is %s", name, t, enforced.String(), req.String())
	}
	if hasLim && lim.Cmp(enforced) < 0 {
		return fmt.Errorf("minimum %s usage per %s is %s, but limit is %s", name, t, enforced.String(), lim.String())
	}
	return nil
}

func maxConstraint(t corev1.LimitType, name string, enforced api.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	if !hasLim {
		return fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", name, t, enforced.String())
	}
	if lim.Cmp(enforced) > 0 {
		return fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", name, t, enforced.String(), lim.String())
	}
	if hasReq && req.Cmp(enforced) > 0 {
		return fmt.Errorf("maximum %s usage per %s is %s, but request is %s", name, t, enforced.String(), req.String())
	}
	return nil
}

func ratioConstraint(t corev1.LimitType, name string, enforced api.Quantity, requests, limits corev1.ResourceList) error {
	req, hasReq := requests[name]
	lim, hasLim := limits[name]
	if !hasReq || req.Sign() == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no request is specified or request is 0", name, t, enforced.String())
	}
	if !hasLim || lim.Sign() == 0 {
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but no limit is specified or limit is 0", name, t, enforced.String())
	}
	l, _ := lim.Rat()
	r, _ := req.Rat()
	ratio := new(big.Rat).Quo(l, r)
	max, _ := enforced.Rat()
	if ratio.Cmp(max) > 0 {
		f, _ := ratio.Float64()
		return fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", name, t, enforced.String(), f)
	}
	return nil
}
