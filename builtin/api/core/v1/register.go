package v1

import (
	"reflect"
	"strconv"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/api/validation"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// GroupVersion returns the core group's version: apiVersion "v1".
func GroupVersion() api.GroupVersion { return api.GroupVersion{Group: "", Version: "v1"} }

// Resources returns the registry entries of every core/v1 kind this package
// serves. Each call builds fresh values.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion(), Resource: "namespaces", Kind: "Namespace", ListKind: "NamespaceList", Singular: "namespace",
			ShortNames:        []string{"ns"},
			Strategy:          namespaceStrategy{registry.Typed[Namespace]{Default: DefaultNamespace, Validate: ValidateNamespace}},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			Deletion:       namespaceDeletion(),
			Subresources:   map[string]registry.Subresource{"finalize": finalizeSubresource{}},
			NameValidation: validation.NameIsDNSLabel,
			Type:           reflect.TypeFor[Namespace](),
			SelectableFields: func(obj map[string]any) map[string]string {
				return map[string]string{"status.phase": api.NestedString(obj, "status", "phase")}
			},
			Printer: NamespacePrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "configmaps", Kind: "ConfigMap", ListKind: "ConfigMapList", Singular: "configmap",
			ShortNames: []string{"cm"}, Namespaced: true,
			Strategy:       registry.Typed[ConfigMap]{Validate: ValidateConfigMap, ValidateUpdateFunc: ValidateConfigMapUpdate},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[ConfigMap](),
			Printer:        ConfigMapPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "secrets", Kind: "Secret", ListKind: "SecretList", Singular: "secret",
			Namespaced:     true,
			Strategy:       registry.Typed[Secret]{Default: DefaultSecret, Validate: ValidateSecret, ValidateUpdateFunc: ValidateSecretUpdate},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[Secret](),
			SelectableFields: func(obj map[string]any) map[string]string {
				return map[string]string{"type": api.NestedString(obj, "type")}
			},
			Printer: SecretPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "serviceaccounts", Kind: "ServiceAccount", ListKind: "ServiceAccountList", Singular: "serviceaccount",
			ShortNames: []string{"sa"}, Namespaced: true,
			Strategy:       registry.Typed[ServiceAccount]{},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[ServiceAccount](),
			Printer:        ServiceAccountPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "events", Kind: "Event", ListKind: "EventList", Singular: "event",
			ShortNames: []string{"ev"}, Namespaced: true,
			Strategy:         registry.Typed[Event]{Validate: ValidateEvent},
			NameValidation:   validation.NameIsDNSSubdomain,
			Type:             reflect.TypeFor[Event](),
			SelectableFields: eventFields,
			Printer:          EventPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "pods", Kind: "Pod", ListKind: "PodList", Singular: "pod",
			ShortNames: []string{"po"}, Categories: []string{"all"}, Namespaced: true,
			Strategy:          registry.Typed[Pod]{Default: DefaultPod, Validate: ValidatePod, ValidateUpdateFunc: ValidatePodUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			// DefaultPod adds the not-ready and unreachable tolerations
			// where Kubernetes' DefaultTolerationSeconds admission does.
			AdmissionDefaults: [][]string{{"spec", "tolerations"}},
			// 1 on create, +1 when an update or pods/ephemeralcontainers changes
			// the spec; a binding does not count (Kubernetes 1.33+,
			// PodObservedGenerationTracking).
			Generation:       true,
			NameValidation:   validation.NameIsDNSSubdomain,
			Type:             reflect.TypeFor[Pod](),
			SelectableFields: podFields,
			Printer:          PodPrinter(),
			Deletion:         PodDeletion(),
			Subresources: map[string]registry.Subresource{
				"binding": bindingSubresource{}, "eviction": evictionSubresource{},
				"ephemeralcontainers": ephemeralContainersSubresource{},
			},
		},
		{
			GroupVersion: GroupVersion(), Resource: "podtemplates", Kind: "PodTemplate", ListKind: "PodTemplateList", Singular: "podtemplate",
			Namespaced:     true,
			Strategy:       registry.Typed[PodTemplate]{Default: DefaultPodTemplate, Validate: ValidatePodTemplate},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[PodTemplate](),
			Printer:        PodTemplatePrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "replicationcontrollers", Kind: "ReplicationController", ListKind: "ReplicationControllerList",
			Singular: "replicationcontroller", ShortNames: []string{"rc"}, Categories: []string{"all"}, Namespaced: true,
			NameValidation: validation.NameIsDNSSubdomain,
			Strategy: registry.Typed[ReplicationController]{Default: DefaultReplicationController, Validate: ValidateReplicationController,
				ValidateUpdateFunc: ValidateReplicationControllerUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true, Generation: true, Type: reflect.TypeFor[ReplicationController](),
			OrphanDependentsByDefault: true, // core/v1's, for backward compatibility
			Scale: &registry.Scale{SpecReplicasPath: []string{"spec", "replicas"}, StatusReplicasPath: []string{"status", "replicas"},
				SelectorFromObject: func(obj map[string]any) string {
					sel := map[string]string{}
					for k, v := range api.NestedMap(obj, "spec", "selector") {
						sel[k], _ = v.(string)
					}
					return labels.SelectorFromSet(sel).String()
				}},
			SelectableFields: func(obj map[string]any) map[string]string {
				n, _ := api.NestedInt64(obj, "status", "replicas")
				return map[string]string{"status.replicas": strconv.FormatInt(n, 10)}
			},
			Printer: ReplicationControllerPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "persistentvolumes", Kind: "PersistentVolume", ListKind: "PersistentVolumeList", Singular: "persistentvolume",
			ShortNames: []string{"pv"},
			Strategy: registry.Typed[PersistentVolume]{Default: DefaultPersistentVolume, Validate: ValidatePersistentVolume,
				ValidateUpdateFunc: ValidatePersistentVolumeUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[PersistentVolume](),
			Printer:        PersistentVolumePrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", ListKind: "PersistentVolumeClaimList", Singular: "persistentvolumeclaim",
			ShortNames: []string{"pvc"}, Namespaced: true,
			Strategy: registry.Typed[PersistentVolumeClaim]{Default: DefaultPersistentVolumeClaim, Validate: ValidatePersistentVolumeClaim,
				ValidateUpdateFunc: ValidatePersistentVolumeClaimUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[PersistentVolumeClaim](),
			Printer:        PersistentVolumeClaimPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "nodes", Kind: "Node", ListKind: "NodeList", Singular: "node",
			ShortNames:        []string{"no"},
			Strategy:          registry.Typed[Node]{Default: DefaultNode, Validate: ValidateNode, ValidateUpdateFunc: ValidateNodeUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[Node](),
			SelectableFields: func(obj map[string]any) map[string]string {
				return map[string]string{"spec.unschedulable": boolField(obj, "spec", "unschedulable")}
			},
			Printer: NodePrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "services", Kind: "Service", ListKind: "ServiceList", Singular: "service",
			ShortNames: []string{"svc"}, Categories: []string{"all"}, Namespaced: true,
			Strategy:          registry.Typed[Service]{Default: DefaultService, Validate: ValidateService, ValidateUpdateFunc: ValidateServiceUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			NameValidation: validation.NameIsDNS1035Label,
			Type:           reflect.TypeFor[Service](),
			Printer:        ServicePrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "endpoints", Kind: "Endpoints", ListKind: "EndpointsList", Singular: "endpoints",
			ShortNames: []string{"ep"}, Namespaced: true,
			Strategy:       registry.Typed[Endpoints]{Default: DefaultEndpoints},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[Endpoints](),
			Printer:        EndpointsPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "resourcequotas", Kind: "ResourceQuota", ListKind: "ResourceQuotaList", Singular: "resourcequota",
			ShortNames: []string{"quota"}, Namespaced: true,
			Strategy: registry.Typed[ResourceQuota]{Validate: ValidateResourceQuota, ValidateUpdateFunc: ValidateResourceQuotaUpdate,
				ValidateStatusUpdateFunc: ValidateResourceQuotaStatusUpdate},
			StatusSubresource: true, StatusUpdatesMetadata: true,
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[ResourceQuota](),
			Printer:        ResourceQuotaPrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "limitranges", Kind: "LimitRange", ListKind: "LimitRangeList", Singular: "limitrange",
			ShortNames: []string{"limits"}, Namespaced: true,
			Strategy:       registry.Typed[LimitRange]{Default: DefaultLimitRange, Validate: ValidateLimitRange},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[LimitRange](),
			Printer:        LimitRangePrinter(),
		},
		{
			GroupVersion: GroupVersion(), Resource: "bindings", Kind: "Binding", ListKind: "BindingList", Singular: "binding",
			Namespaced:     true,
			Verbs:          []string{"create"},
			Strategy:       registry.Typed[Binding]{},
			NameValidation: validation.NameIsDNSSubdomain,
			Type:           reflect.TypeFor[Binding](),
			// As in Kubernetes, a Binding is not stored: it binds the pod it names.
			CreateAs: &registry.SubresourceRef{Resource: "pods", Subresource: "binding"},
		},
	}
}

func boolField(obj map[string]any, path ...string) string {
	v, _ := api.NestedField(obj, path...)
	b, _ := v.(bool)
	return strconv.FormatBool(b)
}

// podFields are the pod field selectors of Kubernetes' pod ToSelectableFields.
func podFields(obj map[string]any) map[string]string {
	return map[string]string{
		"spec.nodeName":            api.NestedString(obj, "spec", "nodeName"),
		"spec.restartPolicy":       api.NestedString(obj, "spec", "restartPolicy"),
		"spec.schedulerName":       api.NestedString(obj, "spec", "schedulerName"),
		"spec.serviceAccountName":  api.NestedString(obj, "spec", "serviceAccountName"),
		"spec.hostNetwork":         boolField(obj, "spec", "hostNetwork"),
		"status.phase":             api.NestedString(obj, "status", "phase"),
		"status.podIP":             api.NestedString(obj, "status", "podIP"),
		"status.nominatedNodeName": api.NestedString(obj, "status", "nominatedNodeName"),
	}
}

// eventFields are the event field selectors of Kubernetes' event ToSelectableFields.
func eventFields(obj map[string]any) map[string]string {
	source := api.NestedString(obj, "source", "component")
	if source == "" {
		// Events written through events.k8s.io name their reporter only in
		// reportingController (reportingComponent here), as Kubernetes' field set.
		source = api.NestedString(obj, "reportingComponent")
	}
	out := map[string]string{
		"reason":             api.NestedString(obj, "reason"),
		"reportingComponent": api.NestedString(obj, "reportingComponent"),
		"source":             source,
		"type":               api.NestedString(obj, "type"),
	}
	for _, f := range []string{"kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"} {
		out["involvedObject."+f] = api.NestedString(obj, "involvedObject", f)
	}
	return out
}
