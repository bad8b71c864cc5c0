package v1

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the apps/v1 resources.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "deployments", Kind: "Deployment", ListKind: "DeploymentList",
			Singular: "deployment", ShortNames: []string{"deploy"}, Categories: []string{"all"}, Namespaced: true,
			Strategy: registry.Typed[Deployment]{
				Default: DefaultDeployment, Validate: ValidateDeployment, ValidateUpdateFunc: ValidateDeploymentUpdate,
			},
			StatusSubresource: true, StatusUpdatesMetadata: true, StatusResetsLabels: true, Generation: true, Type: reflect.TypeFor[Deployment](),
			Scale:   scale(),
			Printer: deploymentPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "replicasets", Kind: "ReplicaSet", ListKind: "ReplicaSetList",
			Singular: "replicaset", ShortNames: []string{"rs"}, Categories: []string{"all"}, Namespaced: true,
			Strategy: registry.Typed[ReplicaSet]{
				Default: DefaultReplicaSet, Validate: ValidateReplicaSet, ValidateUpdateFunc: ValidateReplicaSetUpdate,
			},
			StatusSubresource: true, StatusUpdatesMetadata: true, Generation: true, Type: reflect.TypeFor[ReplicaSet](),
			Scale: scale(),
			SelectableFields: func(obj map[string]any) map[string]string {
				n, _ := api.NestedInt64(obj, "status", "replicas")
				return map[string]string{"status.replicas": fmt.Sprint(n)}
			},
			Printer: replicaSetPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "statefulsets", Kind: "StatefulSet", ListKind: "StatefulSetList",
			Singular: "statefulset", ShortNames: []string{"sts"}, Categories: []string{"all"}, Namespaced: true,
			Strategy: registry.Typed[StatefulSet]{
				Default: DefaultStatefulSet, Validate: ValidateStatefulSet, ValidateUpdateFunc: ValidateStatefulSetUpdate,
			},
			StatusSubresource: true, StatusUpdatesMetadata: true, Generation: true, Type: reflect.TypeFor[StatefulSet](),
			Scale:   scale(),
			Printer: statefulSetPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "daemonsets", Kind: "DaemonSet", ListKind: "DaemonSetList",
			Singular: "daemonset", ShortNames: []string{"ds"}, Categories: []string{"all"}, Namespaced: true,
			Strategy: daemonSetStrategy{registry.Typed[DaemonSet]{
				Default: DefaultDaemonSet, Validate: ValidateDaemonSet, ValidateUpdateFunc: ValidateDaemonSetUpdate,
			}},
			StatusSubresource: true, StatusUpdatesMetadata: true, Generation: true, Type: reflect.TypeFor[DaemonSet](),
			Printer: daemonSetPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "controllerrevisions", Kind: "ControllerRevision",
			ListKind: "ControllerRevisionList", Singular: "controllerrevision", Namespaced: true,
			Strategy: registry.Typed[ControllerRevision]{
				Validate: ValidateControllerRevision, ValidateUpdateFunc: ValidateControllerRevisionUpdate,
			},
			Type:    reflect.TypeFor[ControllerRevision](),
			Printer: controllerRevisionPrinter(),
		},
	}
}

func scale() *registry.Scale {
	return &registry.Scale{
		SpecReplicasPath:   []string{"spec", "replicas"},
		StatusReplicasPath: []string{"status", "replicas"},
		SelectorFromObject: SelectorFromObject,
	}
}

// SelectorFromObject renders spec.selector of a workload held as a map as a
// string label selector ("app=nginx"), for the scale subresource.
func SelectorFromObject(obj map[string]any) string {
	sel, err := registry.FromMap[api.LabelSelector](api.NestedMap(obj, "spec", "selector"))
	if err != nil {
		return ""
	}
	return labels.FormatLabelSelector(sel)
}

const (
	descName       = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically."
	descAge        = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
	descContainers = "Names of each container in the template."
	descImages     = "Images referenced by each container in the template."
	descSelector   = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."
)

func nameCol() registry.Column {
	return registry.Column{Name: "Name", Type: "string", Format: "name", Description: descName}
}

func ageCol() registry.Column {
	return registry.Column{Name: "Age", Type: "string", Description: descAge}
}

func wideCols(selector bool) []registry.Column {
	cols := []registry.Column{
		{Name: "Containers", Type: "string", Priority: 1, Description: descContainers},
		{Name: "Images", Type: "string", Priority: 1, Description: descImages},
	}
	if selector {
		cols = append(cols, registry.Column{Name: "Selector", Type: "string", Priority: 1, Description: descSelector})
	}
	return cols
}

// containerCells is kubectl's layoutContainerCells: names and images joined by ",".
func containerCells(cs []corev1.Container) (string, string) {
	names := make([]string, len(cs))
	images := make([]string, len(cs))
	for i, c := range cs {
		names[i], images[i] = c.Name, c.Image
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func replicas(p *int32) int64 {
	if p == nil {
		return 0
	}
	return int64(*p)
}

func deploymentPrinter() *registry.Printer {
	cols := []registry.Column{nameCol(),
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		{Name: "Up-to-date", Type: "integer", Description: "Total number of non-terminating pods targeted by this deployment that have the desired template spec."},
		{Name: "Available", Type: "integer", Description: "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment."},
		ageCol(),
	}
	return &registry.Printer{
		Columns: append(cols, wideCols(true)...),
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			d, err := registry.FromMap[Deployment](obj)
			if err != nil {
				return nil, fmt.Errorf("decode deployment: %w", err)
			}
			names, images := containerCells(d.Spec.Template.Spec.Containers)
			return []any{d.Name, fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicas(d.Spec.Replicas)),
				int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), registry.Age(d.CreationTimestamp, now),
				names, images, labels.FormatLabelSelector(d.Spec.Selector)}, nil
		},
	}
}

func replicaSetPrinter() *registry.Printer {
	cols := []registry.Column{nameCol(),
		{Name: "Desired", Type: "integer", Description: "Replicas is the number of desired pods."},
		{Name: "Current", Type: "integer", Description: "Replicas is the most recently observed number of non-terminating pods."},
		{Name: "Ready", Type: "integer", Description: "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."},
		ageCol(),
	}
	return &registry.Printer{
		Columns: append(cols, wideCols(true)...),
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			rs, err := registry.FromMap[ReplicaSet](obj)
			if err != nil {
				return nil, fmt.Errorf("decode replicaset: %w", err)
			}
			names, images := containerCells(rs.Spec.Template.Spec.Containers)
			return []any{rs.Name, replicas(rs.Spec.Replicas), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
				registry.Age(rs.CreationTimestamp, now), names, images, labels.FormatLabelSelector(rs.Spec.Selector)}, nil
		},
	}
}

func statefulSetPrinter() *registry.Printer {
	cols := []registry.Column{nameCol(),
		{Name: "Ready", Type: "string", Description: "Number of the pod with ready state"},
		ageCol(),
	}
	return &registry.Printer{
		Columns: append(cols, wideCols(false)...),
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			ss, err := registry.FromMap[StatefulSet](obj)
			if err != nil {
				return nil, fmt.Errorf("decode statefulset: %w", err)
			}
			names, images := containerCells(ss.Spec.Template.Spec.Containers)
			return []any{ss.Name, fmt.Sprintf("%d/%d", ss.Status.ReadyReplicas, replicas(ss.Spec.Replicas)),
				registry.Age(ss.CreationTimestamp, now), names, images}, nil
		},
	}
}

func daemonSetPrinter() *registry.Printer {
	cols := []registry.Column{nameCol(),
		{Name: "Desired", Type: "integer", Description: "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod)."},
		{Name: "Current", Type: "integer", Description: "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."},
		{Name: "Ready", Type: "integer", Description: "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."},
		{Name: "Up-to-date", Type: "integer", Description: "The total number of nodes that are running updated daemon pod"},
		{Name: "Available", Type: "integer", Description: "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"},
		{Name: "Node Selector", Type: "string", Description: "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node."},
		ageCol(),
	}
	return &registry.Printer{
		Columns: append(cols, wideCols(true)...),
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			ds, err := registry.FromMap[DaemonSet](obj)
			if err != nil {
				return nil, fmt.Errorf("decode daemonset: %w", err)
			}
			names, images := containerCells(ds.Spec.Template.Spec.Containers)
			st := ds.Status
			return []any{ds.Name, int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
				int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), formatLabels(ds.Spec.Template.Spec.NodeSelector),
				registry.Age(ds.CreationTimestamp, now), names, images, labels.FormatLabelSelector(ds.Spec.Selector)}, nil
		},
	}
}

func controllerRevisionPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameCol(),
			{Name: "Controller", Type: "string", Description: "Controller of the object"},
			{Name: "Revision", Type: "integer", Description: "Revision indicates the revision of the state represented by Data."},
			ageCol(),
		},
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			cr, err := registry.FromMap[ControllerRevision](obj)
			if err != nil {
				return nil, fmt.Errorf("decode controllerrevision: %w", err)
			}
			controller := "<none>"
			for _, o := range cr.OwnerReferences {
				if o.Controller != nil && *o.Controller {
					gv, _ := api.ParseGroupVersion(o.APIVersion)
					kind := strings.ToLower(o.Kind)
					if gv.Group != "" {
						kind += "." + gv.Group
					}
					controller = kind + "/" + o.Name
					break
				}
			}
			return []any{cr.Name, controller, cr.Revision, registry.Age(cr.CreationTimestamp, now)}, nil
		},
	}
}

// formatLabels is labels.FormatLabels: sorted "k=v,k2=v2", or "<none>".
func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
