package v1

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

var (
	podsResource            = api.GroupResource{Resource: "pods"}
	priorityClassesResource = api.GroupResource{Group: GroupVersion.Group, Resource: "priorityclasses"}
)

// PodPriority is Kubernetes' Priority admission step, over the objects of the
// create path (map[string]any as canonicalized by the pods strategy). Its
// lookups are function fields so it can read a watch cache, storage or a
// client; both must be safe for concurrent use.
type PodPriority struct {
	// Get returns the named class, or (nil, nil) when there is none.
	Get func(ctx context.Context, name string) (*PriorityClass, error)
	// List returns every class.
	List func(ctx context.Context) ([]*PriorityClass, error)
}

// AdmitPod resolves a new pod's priority: spec.priorityClassName names a class
// (or, when empty, the global default class is used and its name recorded; with
// no default, the priority is 0 and the policy PreemptLowerPriority), and
// spec.priority and spec.preemptionPolicy are set from it. A missing class, or a
// priority or policy in the request that differs from the class's, is refused
// with 403 Forbidden and Kubernetes' messages.
func (p PodPriority) AdmitPod(ctx context.Context, pod map[string]any) error {
	name := podName(pod)
	className := api.NestedString(pod, "spec", "priorityClassName")
	var (
		priority int32
		policy   string
	)
	if className == "" {
		dpc, err := p.defaultClass(ctx)
		if err != nil {
			return apierrors.NewForbidden(podsResource, name, fmt.Errorf("failed to get default priority class: %w", err))
		}
		priority, policy = DefaultPriorityWhenNoDefaultClassExists, "PreemptLowerPriority"
		if dpc != nil {
			className, priority, policy = dpc.Name, dpc.Value, policyOf(dpc.PreemptionPolicy)
			api.SetNestedField(pod, className, "spec", "priorityClassName")
		}
	} else {
		pc, err := p.Get(ctx, className)
		if err != nil {
			return apierrors.NewInternalError(fmt.Errorf("failed to get PriorityClass with name %s: %w", className, err))
		}
		if pc == nil {
			return apierrors.NewForbidden(podsResource, name, fmt.Errorf("no PriorityClass with name %v was found", className))
		}
		priority, policy = pc.Value, policyOf(pc.PreemptionPolicy)
	}
	if v, ok := api.NestedField(pod, "spec", "priority"); ok && v != nil {
		if got, _ := api.NestedInt64(pod, "spec", "priority"); got != int64(priority) {
			return apierrors.NewForbidden(podsResource, name, fmt.Errorf(
				"the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name",
				got, priority))
		}
	}
	api.SetNestedField(pod, int64(priority), "spec", "priority")
	if got := api.NestedString(pod, "spec", "preemptionPolicy"); got != "" && policy != "" && got != policy {
		return apierrors.NewForbidden(podsResource, name, fmt.Errorf(
			"the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name",
			got, policy))
	}
	if policy != "" {
		api.SetNestedField(pod, policy, "spec", "preemptionPolicy")
	}
	return nil
}

// AdmitPriorityClass refuses a second global default: creating a class with
// globalDefault, or setting it on an update, while another class is the
// default is 403 Forbidden.
func (p PodPriority) AdmitPriorityClass(ctx context.Context, pc map[string]any) error {
	if v, _ := api.NestedField(pc, "globalDefault"); v != true {
		return nil
	}
	name := api.NestedString(pc, "metadata", "name")
	dpc, err := p.defaultClass(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("failed to get default priority class: %w", err))
	}
	if dpc != nil && dpc.Name != name {
		return apierrors.NewForbidden(priorityClassesResource, name,
			fmt.Errorf("PriorityClass %v is already marked as default. Only one default can exist", dpc.Name))
	}
	return nil
}

// defaultClass returns the global default class with the lowest value (there
// may be several after racing creates), or nil.
func (p PodPriority) defaultClass(ctx context.Context) (*PriorityClass, error) {
	if p.List == nil {
		return nil, nil
	}
	list, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	return DefaultClass(list), nil
}

// DefaultClass returns the globalDefault class with the lowest value, or nil.
func DefaultClass(list []*PriorityClass) *PriorityClass {
	var out *PriorityClass
	for _, pc := range list {
		if pc.GlobalDefault && (out == nil || pc.Value < out.Value) {
			out = pc
		}
	}
	return out
}

func podName(pod map[string]any) string {
	if n := api.NestedString(pod, "metadata", "name"); n != "" {
		return n
	}
	return api.NestedString(pod, "metadata", "generateName")
}
