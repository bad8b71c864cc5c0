package v1

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Column descriptions shared by every kind (Kubernetes takes them from ObjectMeta's
// API documentation).
const (
	nameDescription = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	ageDescription  = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"

	// nodeUnreachablePodReason is the status.reason the node controller sets on pods
	// of an unreachable node.
	nodeUnreachablePodReason = "NodeLost"
	// PodReasonSchedulingGated is the PodScheduled condition reason of a gated pod.
	PodReasonSchedulingGated = "SchedulingGated"
	// labelNodeRolePrefix and labelNodeRole carry node roles.
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	labelNodeRole       = "kubernetes.io/role"
)

var (
	nameColumn = registry.Column{Name: "Name", Type: "string", Format: "name", Description: nameDescription}
	ageColumn  = registry.Column{Name: "Age", Type: "string", Description: ageDescription}
)

// rowFunc adapts a typed row function to a registry.Printer row.
func rowFunc[T any](f func(obj *T, now time.Time) []any) func(map[string]any, time.Time) ([]any, error) {
	return func(m map[string]any, now time.Time) ([]any, error) {
		obj, err := registry.FromMap[T](m)
		if err != nil {
			return nil, fmt.Errorf("decode %T for printing: %w", obj, err)
		}
		return f(obj, now), nil
	}
}

// PodPrinter renders kubectl's pod columns.
func PodPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Ready", Type: "string", Description: "The aggregate readiness state of this pod for accepting traffic."},
			{Name: "Status", Type: "string", Description: "The aggregate status of the containers in this pod."},
			{Name: "Restarts", Type: "string", Description: "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."},
			ageColumn,
			{Name: "IP", Type: "string", Priority: 1, Description: "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."},
			{Name: "Node", Type: "string", Priority: 1, Description: "NodeName indicates in which node this pod is scheduled."},
			{Name: "Nominated Node", Type: "string", Priority: 1, Description: "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods."},
			{Name: "Readiness Gates", Type: "string", Priority: 1, Description: "If specified, all readiness gates will be evaluated for pod readiness."},
		},
		Row: rowFunc(podRow),
	}
}

func isRestartableInit(c *Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == ContainerRestartPolicyAlways
}

func podConditionTrue(s *PodStatus, t PodConditionType) bool {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c.Status == ConditionTrue
		}
	}
	return false
}

func laterOf(a, b api.Time) api.Time {
	if a.Time.Before(b.Time) {
		return b
	}
	return a
}

// podRow follows Kubernetes' printPod: READY counts ready containers (and started
// sidecars), STATUS is the most telling container or init reason.
func podRow(pod *Pod, now time.Time) []any {
	restarts, sidecarRestarts := 0, 0
	total := len(pod.Spec.Containers)
	ready := 0
	var lastRestart, lastSidecarRestart api.Time
	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == PodScheduled && c.Reason == PodReasonSchedulingGated {
			reason = PodReasonSchedulingGated
		}
	}
	inits := map[string]*Container{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		inits[c.Name] = c
		if isRestartableInit(c) {
			total++
		}
	}
	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		cs := &pod.Status.InitContainerStatuses[i]
		restarts += int(cs.RestartCount)
		if t := cs.LastTerminationState.Terminated; t != nil {
			lastRestart = laterOf(lastRestart, t.FinishedAt)
		}
		sidecar := isRestartableInit(inits[cs.Name])
		if sidecar {
			sidecarRestarts += int(cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil {
				lastSidecarRestart = laterOf(lastSidecarRestart, t.FinishedAt)
			}
		}
		switch {
		case cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0:
			continue
		case sidecar && cs.Started != nil && *cs.Started:
			if cs.Ready {
				ready++
			}
			continue
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			switch {
			case t.Reason != "":
				reason = "Init:" + t.Reason
			case t.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case cs.State.Waiting != nil && cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + cs.State.Waiting.Reason
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}
	if !initializing || podConditionTrue(&pod.Status, PodInitialized) {
		restarts = sidecarRestarts
		lastRestart = lastSidecarRestart
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := &pod.Status.ContainerStatuses[i]
			restarts += int(cs.RestartCount)
			if t := cs.LastTerminationState.Terminated; t != nil {
				lastRestart = laterOf(lastRestart, t.FinishedAt)
			}
			switch {
			case cs.State.Waiting != nil && cs.State.Waiting.Reason != "":
				reason = cs.State.Waiting.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Reason != "":
				reason = cs.State.Terminated.Reason
			case cs.State.Terminated != nil && cs.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", cs.State.Terminated.Signal)
			case cs.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", cs.State.Terminated.ExitCode)
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				ready++
			}
		}
		if reason == "Completed" && hasRunning {
			if podConditionTrue(&pod.Status, PodReady) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}
	if pod.DeletionTimestamp != nil && pod.Status.Reason == nodeUnreachablePodReason {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && pod.Status.Phase != PodSucceeded && pod.Status.Phase != PodFailed {
		reason = "Terminating"
	}
	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, registry.Age(lastRestart, now))
	}
	podIP := "<none>"
	if len(pod.Status.PodIPs) > 0 && pod.Status.PodIPs[0].IP != "" {
		podIP = pod.Status.PodIPs[0].IP
	}
	gates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		n := 0
		for _, g := range pod.Spec.ReadinessGates {
			if podConditionTrue(&pod.Status, g.ConditionType) {
				n++
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(pod.Spec.ReadinessGates))
	}
	return []any{pod.Name, fmt.Sprintf("%d/%d", ready, total), reason, restartsStr,
		registry.Age(pod.CreationTimestamp, now), podIP, orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), gates}
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// formatLabels renders "k=v,k2=v2" sorted by key, or "<none>".
func formatLabels(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// PodTemplatePrinter renders kubectl's podtemplate columns.
func PodTemplatePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Containers", Type: "string", Description: "Names of each container in the template."},
			{Name: "Images", Type: "string", Description: "Images referenced by each container in the template."},
			{Name: "Pod Labels", Type: "string", Description: "The labels for the pod template."},
		},
		Row: rowFunc(func(t *PodTemplate, _ time.Time) []any {
			var names, images []string
			for _, c := range t.Template.Spec.Containers {
				names = append(names, c.Name)
				images = append(images, c.Image)
			}
			return []any{t.Name, strings.Join(names, ","), strings.Join(images, ","), formatLabels(t.Template.Labels)}
		}),
	}
}

// ServicePrinter renders kubectl's service columns.
func ServicePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Type", Type: "string", Description: "type determines how the Service is exposed."},
			{Name: "Cluster-IP", Type: "string", Description: "clusterIP is the IP address of the service and is usually assigned randomly."},
			{Name: "External-IP", Type: "string", Description: "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."},
			{Name: "Port(s)", Type: "string", Description: "The list of ports that are exposed by this service."},
			ageColumn,
			{Name: "Selector", Type: "string", Priority: 1, Description: "Route service traffic to pods with label keys and values matching this selector."},
		},
		Row: rowFunc(func(s *Service, now time.Time) []any {
			clusterIP := "<none>"
			if len(s.Spec.ClusterIPs) > 0 {
				clusterIP = s.Spec.ClusterIPs[0]
			} else if s.Spec.ClusterIP != "" {
				clusterIP = s.Spec.ClusterIP
			}
			var ports []string
			for _, p := range s.Spec.Ports {
				if p.NodePort > 0 {
					ports = append(ports, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, p.Protocol))
				} else {
					ports = append(ports, fmt.Sprintf("%d/%s", p.Port, p.Protocol))
				}
			}
			portStr := strings.Join(ports, ",")
			if portStr == "" {
				portStr = "<none>"
			}
			return []any{s.Name, string(s.Spec.Type), clusterIP, serviceExternalIP(s), portStr,
				registry.Age(s.CreationTimestamp, now), formatLabels(s.Spec.Selector)}
		}),
	}
}

func serviceExternalIP(s *Service) string {
	switch s.Spec.Type {
	case ServiceTypeClusterIP, ServiceTypeNodePort:
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case ServiceTypeLoadBalancer:
		var ips []string
		for _, ing := range s.Status.LoadBalancer.Ingress {
			if ing.IP != "" {
				ips = append(ips, ing.IP)
			} else if ing.Hostname != "" {
				ips = append(ips, ing.Hostname)
			}
		}
		ips = append(ips, s.Spec.ExternalIPs...)
		if len(ips) > 0 {
			return strings.Join(ips, ",")
		}
		return "<pending>"
	case ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

// NodePrinter renders kubectl's node columns.
func NodePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Status", Type: "string", Description: "The status of the node"},
			{Name: "Roles", Type: "string", Description: "The roles of the node"},
			ageColumn,
			{Name: "Version", Type: "string", Description: "Kubelet Version reported by the node."},
			{Name: "Internal-IP", Type: "string", Priority: 1, Description: "List of addresses reachable to the node."},
			{Name: "External-IP", Type: "string", Priority: 1, Description: "List of addresses reachable to the node."},
			{Name: "OS-Image", Type: "string", Priority: 1, Description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."},
			{Name: "Kernel-Version", Type: "string", Priority: 1, Description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."},
			{Name: "Container-Runtime", Type: "string", Priority: 1, Description: "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."},
		},
		Row: rowFunc(nodeRow),
	}
}

func nodeRow(n *Node, now time.Time) []any {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type != NodeReady {
			continue
		}
		if c.Status == ConditionTrue {
			status = append(status, string(c.Type))
		} else {
			status = append(status, "Not"+string(c.Type))
		}
		break
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	roles := map[string]bool{}
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if r := strings.TrimPrefix(k, labelNodeRolePrefix); r != "" {
				roles[r] = true
			}
		case k == labelNodeRole && v != "":
			roles[v] = true
		}
	}
	roleStr := strings.Join(sortedKeys(roles), ",")
	address := func(t NodeAddressType) string {
		for _, a := range n.Status.Addresses {
			if a.Type == t {
				return a.Address
			}
		}
		return "<none>"
	}
	info := n.Status.NodeInfo
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	return []any{n.Name, strings.Join(status, ","), orNone(roleStr), registry.Age(n.CreationTimestamp, now), info.KubeletVersion,
		address(NodeInternalIP), address(NodeExternalIP), unknown(info.OSImage), unknown(info.KernelVersion), unknown(info.ContainerRuntimeVersion)}
}

// NamespacePrinter renders kubectl's namespace columns.
func NamespacePrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn, {Name: "Status", Type: "string", Description: "The status of the namespace"}, ageColumn},
		Row: rowFunc(func(n *Namespace, now time.Time) []any {
			return []any{n.Name, string(n.Status.Phase), registry.Age(n.CreationTimestamp, now)}
		}),
	}
}

// ConfigMapPrinter renders kubectl's configmap columns.
func ConfigMapPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn, {Name: "Data", Type: "string", Description: "Data contains the configuration data."}, ageColumn},
		Row: rowFunc(func(c *ConfigMap, now time.Time) []any {
			return []any{c.Name, int64(len(c.Data) + len(c.BinaryData)), registry.Age(c.CreationTimestamp, now)}
		}),
	}
}

// SecretPrinter renders kubectl's secret columns.
func SecretPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			nameColumn,
			{Name: "Type", Type: "string", Description: "Used to facilitate programmatic handling of secret data."},
			{Name: "Data", Type: "string", Description: "Data contains the secret data."},
			ageColumn,
		},
		Row: rowFunc(func(s *Secret, now time.Time) []any {
			return []any{s.Name, string(s.Type), int64(len(s.Data)), registry.Age(s.CreationTimestamp, now)}
		}),
	}
}

// ServiceAccountPrinter renders kubectl's serviceaccount columns.
func ServiceAccountPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn, {Name: "Secrets", Type: "string", Description: "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."}, ageColumn},
		Row: rowFunc(func(s *ServiceAccount, now time.Time) []any {
			return []any{s.Name, int64(len(s.Secrets)), registry.Age(s.CreationTimestamp, now)}
		}),
	}
}

// EndpointsPrinter renders kubectl's endpoints columns.
func EndpointsPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{nameColumn, {Name: "Endpoints", Type: "string", Description: "The set of all endpoints is the union of all subsets."}, ageColumn},
		Row: rowFunc(func(e *Endpoints, now time.Time) []any {
			return []any{e.Name, formatEndpoints(e), registry.Age(e.CreationTimestamp, now)}
		}),
	}
}

// formatEndpoints lists at most three ip:port pairs, then "+ N more...".
func formatEndpoints(e *Endpoints) string {
	if len(e.Subsets) == 0 {
		return "<none>"
	}
	const max = 3
	var list []string
	more := false
	count := 0
	for _, ss := range e.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				if len(list) == max {
					more = true
					break
				}
				list = append(list, net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-max)
	}
	if ret == "" {
		return "<none>"
	}
	return ret
}

// EventPrinter renders kubectl's event columns.
func EventPrinter() *registry.Printer {
	return &registry.Printer{
		Columns: []registry.Column{
			{Name: "Last Seen", Type: "string", Description: "The time at which the most recent occurrence of this event was recorded."},
			{Name: "Type", Type: "string", Description: "Type of this event (Normal, Warning), new types could be added in the future"},
			{Name: "Reason", Type: "string", Description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."},
			{Name: "Object", Type: "string", Description: "The object that this event is about."},
			{Name: "Subobject", Type: "string", Priority: 1, Description: "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]."},
			{Name: "Source", Type: "string", Priority: 1, Description: "The component reporting this event. Should be a short machine understandable string."},
			{Name: "Message", Type: "string", Description: "A human-readable description of the status of this operation."},
			{Name: "First Seen", Type: "string", Priority: 1, Description: "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)"},
			{Name: "Count", Type: "string", Priority: 1, Description: "The number of times this event has occurred."},
			{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: nameDescription},
		},
		Row: rowFunc(eventRow),
	}
}

func microAge(t api.MicroTime, now time.Time) string {
	return registry.Age(api.NewTime(t.Time), now)
}

func eventRow(e *Event, now time.Time) []any {
	first := registry.Age(e.FirstTimestamp, now)
	if e.FirstTimestamp.IsZero() {
		first = microAge(e.EventTime, now)
	}
	last := registry.Age(e.LastTimestamp, now)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = microAge(e.Series.LastObservedTime, now)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	component := e.Source.Component
	if component == "" {
		component = e.ReportingController
	}
	instance := e.Source.Host
	if instance == "" {
		instance = e.ReportingInstance
	}
	source := ""
	if component != "" {
		source = strings.Join(slices.DeleteFunc([]string{component, instance}, func(s string) bool { return s == "" }), ", ")
	}
	return []any{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source, strings.TrimSpace(e.Message), first, int64(count), e.Name}
}
