package v1

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/converge-dev/converge/framework/api"
)

// Default values the API server fills in.
const (
	DefaultSchedulerName                       = "default-scheduler"
	DefaultTerminationGracePeriodSeconds       = 30
	DefaultTerminationMessagePath              = "/dev/termination-log"
	DefaultVolumeMode                    int32 = 0o644
	DefaultTolerationSeconds                   = 300
	DefaultClientIPAffinitySeconds             = 10800
	DefaultServiceAccountTokenExpiration       = 3600
	// LabelMetadataName is the label every namespace carries with its own name.
	LabelMetadataName = "kubernetes.io/metadata.name"
	// TaintNodeNotReady and TaintNodeUnreachable are the taints the node lifecycle
	// controller sets; pods tolerate them for DefaultTolerationSeconds by default.
	TaintNodeNotReady    = "node.kubernetes.io/not-ready"
	TaintNodeUnreachable = "node.kubernetes.io/unreachable"
)

// DefaultPod applies the defaults the API server gives a new or updated Pod: the
// PodSpec defaults, requests copied from limits, enableServiceLinks, host ports for
// host-network pods and the not-ready/unreachable tolerations
// (DefaultTolerationSeconds admission), phase Pending for a pod that has
// none yet and status.qosClass (what Kubernetes' PrepareForCreate gives every
// new pod; defaulting runs again after mutating admission, so LimitRange
// defaults count). Priority and
// preemptionPolicy come from the Priority admission step (PriorityClasses), not
// from defaulting.
func DefaultPod(p *Pod) {
	DefaultPodSpec(&p.Spec)
	if p.Status.Phase == "" {
		p.Status.Phase = PodPending
	}
	for _, cs := range [][]Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			r := &cs[i].Resources
			if r.Limits == nil {
				continue
			}
			if r.Requests == nil {
				r.Requests = ResourceList{}
			}
			for k, v := range r.Limits {
				if _, ok := r.Requests[k]; !ok {
					r.Requests[k] = v
				}
			}
		}
	}
	if p.Spec.EnableServiceLinks == nil {
		p.Spec.EnableServiceLinks = api.Ptr(true)
	}
	if p.Spec.HostNetwork {
		for _, cs := range [][]Container{p.Spec.Containers, p.Spec.InitContainers} {
			for i := range cs {
				for j := range cs[i].Ports {
					if cs[i].Ports[j].HostPort == 0 {
						cs[i].Ports[j].HostPort = cs[i].Ports[j].ContainerPort
					}
				}
			}
		}
	}
	addDefaultTolerations(&p.Spec)
	// The class follows from the (defaulted) spec; Kubernetes sets it at
	// creation and its resources cannot change the class afterwards.
	p.Status.QOSClass = PodQOS(&p.Spec)
}

// addDefaultTolerations adds NoExecute tolerations of the not-ready and unreachable
// taints for 300s unless the pod already tolerates them.
func addDefaultTolerations(spec *PodSpec) {
	tolerates := func(key string) bool {
		for _, t := range spec.Tolerations {
			if (t.Key == key || (t.Key == "" && t.Operator == TolerationOpExists)) &&
				(t.Effect == "" || t.Effect == TaintEffectNoExecute) {
				return true
			}
		}
		return false
	}
	for _, key := range []string{TaintNodeNotReady, TaintNodeUnreachable} {
		if tolerates(key) {
			continue
		}
		spec.Tolerations = append(spec.Tolerations, Toleration{
			Key:               key,
			Operator:          TolerationOpExists,
			Effect:            TaintEffectNoExecute,
			TolerationSeconds: api.Ptr(int64(DefaultTolerationSeconds)),
		})
	}
}

// DefaultPodTemplateSpec applies the defaults of a pod template (workload kinds use
// it): only the PodSpec defaults, as in Kubernetes.
func DefaultPodTemplateSpec(t *PodTemplateSpec) { DefaultPodSpec(&t.Spec) }

// DefaultPodTemplate applies the defaults of a PodTemplate.
func DefaultPodTemplate(t *PodTemplate) { DefaultPodTemplateSpec(&t.Template) }

// DefaultPodSpec applies Kubernetes' PodSpec defaults and the defaults of every type
// inside it (containers, probes, volumes, ...).
func DefaultPodSpec(s *PodSpec) {
	if s.DNSPolicy == "" {
		s.DNSPolicy = DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = RestartPolicyAlways
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &PodSecurityContext{}
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = api.Ptr(int64(DefaultTerminationGracePeriodSeconds))
	}
	if s.SchedulerName == "" {
		s.SchedulerName = DefaultSchedulerName
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i])
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i])
	}
	for i := range s.EphemeralContainers {
		c := Container(s.EphemeralContainers[i].EphemeralContainerCommon)
		defaultContainer(&c)
		s.EphemeralContainers[i].EphemeralContainerCommon = EphemeralContainerCommon(c)
	}
	for i := range s.Volumes {
		defaultVolume(&s.Volumes[i])
	}
}

// pullPolicyFor returns Always for an image tagged :latest or without a tag (and
// without a digest), IfNotPresent otherwise.
func pullPolicyFor(image string) PullPolicy {
	name := image
	digest := false
	if i := strings.Index(name, "@"); i >= 0 {
		name, digest = name[:i], true
	}
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i:], "/") {
		tag = name[i+1:]
	}
	if tag == "latest" || (tag == "" && !digest) {
		return PullAlways
	}
	return PullIfNotPresent
}

func defaultContainer(c *Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = DefaultTerminationMessagePath
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = ProtocolTCP
		}
	}
	for i := range c.Env {
		if c.Env[i].ValueFrom != nil {
			defaultFieldRef(c.Env[i].ValueFrom.FieldRef)
		}
	}
	for _, p := range []*Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		if p == nil {
			continue
		}
		if p.TimeoutSeconds == 0 {
			p.TimeoutSeconds = 1
		}
		if p.PeriodSeconds == 0 {
			p.PeriodSeconds = 10
		}
		if p.SuccessThreshold == 0 {
			p.SuccessThreshold = 1
		}
		if p.FailureThreshold == 0 {
			p.FailureThreshold = 3
		}
		defaultHTTPGet(p.HTTPGet)
	}
	if c.Lifecycle != nil {
		for _, h := range []*LifecycleHandler{c.Lifecycle.PostStart, c.Lifecycle.PreStop} {
			if h != nil {
				defaultHTTPGet(h.HTTPGet)
			}
		}
	}
}

func defaultHTTPGet(h *HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = URISchemeHTTP
	}
}

func defaultFieldRef(f *ObjectFieldSelector) {
	if f != nil && f.APIVersion == "" {
		f.APIVersion = "v1"
	}
}

func defaultMode(m **int32) {
	if *m == nil {
		*m = api.Ptr(DefaultVolumeMode)
	}
}

func defaultVolume(v *Volume) {
	vs := &v.VolumeSource
	if *vs == (VolumeSource{}) {
		vs.EmptyDir = &EmptyDirVolumeSource{}
	}
	if vs.HostPath != nil && vs.HostPath.Type == nil {
		vs.HostPath.Type = api.Ptr(HostPathUnset)
	}
	if vs.Secret != nil {
		defaultMode(&vs.Secret.DefaultMode)
	}
	if vs.ConfigMap != nil {
		defaultMode(&vs.ConfigMap.DefaultMode)
	}
	if vs.DownwardAPI != nil {
		defaultMode(&vs.DownwardAPI.DefaultMode)
		for i := range vs.DownwardAPI.Items {
			defaultFieldRef(vs.DownwardAPI.Items[i].FieldRef)
		}
	}
	if vs.Projected != nil {
		defaultMode(&vs.Projected.DefaultMode)
		for _, src := range vs.Projected.Sources {
			if src.ServiceAccountToken != nil && src.ServiceAccountToken.ExpirationSeconds == nil {
				src.ServiceAccountToken.ExpirationSeconds = api.Ptr(int64(DefaultServiceAccountTokenExpiration))
			}
			if src.DownwardAPI != nil {
				for i := range src.DownwardAPI.Items {
					defaultFieldRef(src.DownwardAPI.Items[i].FieldRef)
				}
			}
		}
	}
	if vs.Ephemeral != nil && vs.Ephemeral.VolumeClaimTemplate != nil {
		DefaultPersistentVolumeClaimSpec(&vs.Ephemeral.VolumeClaimTemplate.Spec)
	}
	if vs.Image != nil && vs.Image.PullPolicy == "" {
		vs.Image.PullPolicy = pullPolicyFor(vs.Image.Reference)
	}
}

// DefaultService applies Kubernetes' Service defaults plus the single-stack IPv4
// family the server's IP allocation records.
func DefaultService(s *Service) {
	sp := &s.Spec
	if sp.SessionAffinity == "" {
		sp.SessionAffinity = ServiceAffinityNone
	}
	if sp.SessionAffinity == ServiceAffinityNone {
		sp.SessionAffinityConfig = nil
	}
	if sp.SessionAffinity == ServiceAffinityClientIP &&
		(sp.SessionAffinityConfig == nil || sp.SessionAffinityConfig.ClientIP == nil || sp.SessionAffinityConfig.ClientIP.TimeoutSeconds == nil) {
		sp.SessionAffinityConfig = &SessionAffinityConfig{ClientIP: &ClientIPConfig{TimeoutSeconds: api.Ptr(int32(DefaultClientIPAffinitySeconds))}}
	}
	if sp.Type == "" {
		sp.Type = ServiceTypeClusterIP
	}
	for i := range sp.Ports {
		p := &sp.Ports[i]
		if p.Protocol == "" {
			p.Protocol = ProtocolTCP
		}
		if p.TargetPort == api.FromInt(0) || p.TargetPort == api.FromString("") {
			p.TargetPort = api.FromInt(int(p.Port))
		}
	}
	externallyAccessible := sp.Type == ServiceTypeLoadBalancer || sp.Type == ServiceTypeNodePort ||
		(sp.Type == ServiceTypeClusterIP && len(sp.ExternalIPs) > 0)
	if externallyAccessible && sp.ExternalTrafficPolicy == "" {
		sp.ExternalTrafficPolicy = ServiceExternalTrafficPolicyCluster
	}
	if sp.InternalTrafficPolicy == nil && sp.Type != ServiceTypeExternalName {
		sp.InternalTrafficPolicy = api.Ptr(ServiceInternalTrafficPolicyCluster)
	}
	if sp.Type == ServiceTypeLoadBalancer {
		if sp.AllocateLoadBalancerNodePorts == nil {
			sp.AllocateLoadBalancerNodePorts = api.Ptr(true)
		}
		for i := range s.Status.LoadBalancer.Ingress {
			if ing := &s.Status.LoadBalancer.Ingress[i]; ing.IP != "" && ing.IPMode == nil {
				ing.IPMode = api.Ptr(LoadBalancerIPModeVIP)
			}
		}
	}
	if sp.Type != ServiceTypeExternalName {
		if sp.IPFamilyPolicy == nil {
			sp.IPFamilyPolicy = api.Ptr(IPFamilyPolicySingleStack)
		}
		if len(sp.IPFamilies) == 0 {
			sp.IPFamilies = []IPFamily{IPv4Protocol}
		}
	}
}

// DefaultNamespace gives a namespace its name label, the "kubernetes" finalizer and
// phase Active.
func DefaultNamespace(n *Namespace) {
	if n.Name != "" {
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels[LabelMetadataName] = n.Name
	}
	if n.Status.Phase == "" {
		n.Status.Phase = NamespaceActive
	}
}

// DefaultSecret sets type Opaque and merges stringData into data (stringData wins),
// then drops stringData, as Kubernetes' conversion does.
func DefaultSecret(s *Secret) {
	if s.Type == "" {
		s.Type = SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

// DefaultNode copies capacity to allocatable when allocatable is unset.
func DefaultNode(n *Node) {
	if n.Status.Allocatable == nil && n.Status.Capacity != nil {
		n.Status.Allocatable = make(ResourceList, len(n.Status.Capacity))
		for k, v := range n.Status.Capacity {
			n.Status.Allocatable[k] = v
		}
	}
}

// DefaultEndpoints sets the protocol of every port to TCP when unset.
func DefaultEndpoints(e *Endpoints) {
	for i := range e.Subsets {
		for j := range e.Subsets[i].Ports {
			if e.Subsets[i].Ports[j].Protocol == "" {
				e.Subsets[i].Ports[j].Protocol = ProtocolTCP
			}
		}
	}
}

// roundTrip deep-copies v through JSON; empty collections come back as nil.
func roundTrip[T any](v *T) (*T, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshal %T: %w", v, err)
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("unmarshal %T: %w", v, err)
	}
	return &out, nil
}
