package v1

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// MaxSecretSize is the largest total size of a Secret's or ConfigMap's data (1 MiB).
const MaxSecretSize = 1 * 1024 * 1024

const (
	portRangeMsg  = "must be between 1 and 65535, inclusive"
	immutableMsg  = "field is immutable when `immutable` is set"
	podUpdateMsg  = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
	envVarNameMsg = "a valid environment variable name must consist only of printable ASCII characters other than '='"
	configKeyFmt  = `[-._a-zA-Z0-9]+`
	configKeyMsg  = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
)

// Compiled once; read-only afterwards.
var (
	configKeyRegexp      = regexp.MustCompile("^" + configKeyFmt + "$")
	portNameCharsetRegex = regexp.MustCompile("^[-a-z0-9]+$")
	portNameLetterRegex  = regexp.MustCompile("[a-z]")
)

var (
	supportedProtocols      = []string{string(ProtocolSCTP), string(ProtocolTCP), string(ProtocolUDP)}
	supportedRestartPolicy  = []string{string(RestartPolicyAlways), string(RestartPolicyOnFailure), string(RestartPolicyNever)}
	supportedDNSPolicy      = []string{string(DNSClusterFirstWithHostNet), string(DNSClusterFirst), string(DNSDefault), string(DNSNone)}
	supportedServiceTypes   = []string{string(ServiceTypeClusterIP), string(ServiceTypeExternalName), string(ServiceTypeLoadBalancer), string(ServiceTypeNodePort)}
	supportedAffinity       = []string{string(ServiceAffinityClientIP), string(ServiceAffinityNone)}
	supportedTaintEffects   = []string{string(TaintEffectNoExecute), string(TaintEffectNoSchedule), string(TaintEffectPreferNoSchedule)}
	supportedTolerationOps  = []string{string(TolerationOpEqual), string(TolerationOpExists)}
	supportedPullPolicies   = []string{string(PullAlways), string(PullIfNotPresent), string(PullNever)}
	supportedTermMsgPolicys = []string{string(TerminationMessageFallbackToLogsOnError), string(TerminationMessageReadFile)}
)

// isValidPortNum returns Kubernetes' message for a port outside 1-65535.
func isValidPortNum(port int32) []string {
	if port < 1 || port > 65535 {
		return []string{portRangeMsg}
	}
	return nil
}

// isValidPortName checks an IANA service name, as port names must be.
func isValidPortName(port string) []string {
	var errs []string
	if len(port) > 15 {
		errs = append(errs, validation.MaxLenError(15))
	}
	if !portNameCharsetRegex.MatchString(port) {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if !portNameLetterRegex.MatchString(port) {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	if strings.Contains(port, "--") {
		errs = append(errs, "must not contain consecutive hyphens (-)")
	}
	if len(port) > 0 && (port[0] == '-' || port[len(port)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen (-)")
	}
	return errs
}

// IsEnvVarName reports whether name is a valid environment variable name:
// since Kubernetes 1.34 (KEP-4369, relaxed validation, GA) any non-empty run
// of printable ASCII characters except '=', so "1-data-1" from envFrom's
// prefix "1-" is one. The node applies it to envFrom keys too.
func IsEnvVarName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < ' ' || c > '~' || c == '=' {
			return false
		}
	}
	return true
}

// isEnvVarName checks an environment variable name.
func isEnvVarName(name string) []string {
	if !IsEnvVarName(name) {
		return []string{envVarNameMsg}
	}
	return nil
}

// isConfigMapKey checks a ConfigMap or Secret data key.
func isConfigMapKey(key string) []string {
	var errs []string
	if len(key) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, validation.MaxLenError(validation.DNS1123SubdomainMaxLength))
	}
	if !configKeyRegexp.MatchString(key) {
		errs = append(errs, validation.RegexError(configKeyMsg, configKeyFmt, "key.name", "KEY_NAME", "key-name"))
	}
	switch {
	case key == ".":
		errs = append(errs, "must not be '.'")
	case key == "..":
		errs = append(errs, "must not be '..'")
	case strings.HasPrefix(key, ".."):
		errs = append(errs, "must not start with '..'")
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ValidatePod checks a Pod's spec.
func ValidatePod(p *Pod) field.ErrorList {
	return ValidatePodSpec(&p.Spec, field.NewPath("spec"))
}

// ValidatePodTemplate checks a PodTemplate.
func ValidatePodTemplate(t *PodTemplate) field.ErrorList {
	return ValidatePodTemplateSpec(&t.Template, field.NewPath("template"))
}

// ValidatePodTemplateSpec checks a pod template at path p (its labels and spec);
// workload kinds call it for spec.template.
func ValidatePodTemplateSpec(t *PodTemplateSpec, p *field.Path) field.ErrorList {
	errs := validation.ValidateLabels(t.Labels, p.Child("metadata", "labels"))
	return append(errs, ValidatePodSpec(&t.Spec, p.Child("spec"))...)
}

// ValidatePodSpec checks a PodSpec at path p: containers, volumes, mounts, ports,
// env, resources, restart and DNS policies, tolerations, sysctls.
func ValidatePodSpec(s *PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	volumes, verrs := validateVolumes(s.Volumes, p.Child("volumes"))
	errs = append(errs, verrs...)
	names := map[string]bool{}
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	errs = append(errs, validateContainers(s.InitContainers, p.Child("initContainers"), volumes, names)...)
	errs = append(errs, validateContainers(s.Containers, p.Child("containers"), volumes, names)...)
	errs = append(errs, validateEphemeralContainers(s, p.Child("ephemeralContainers"), volumes, names)...)
	switch {
	case s.RestartPolicy == "":
		errs = append(errs, field.Required(p.Child("restartPolicy"), ""))
	case !slices.Contains(supportedRestartPolicy, string(s.RestartPolicy)):
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), string(s.RestartPolicy), supportedRestartPolicy))
	}
	switch {
	case s.DNSPolicy == "":
		errs = append(errs, field.Required(p.Child("dnsPolicy"), ""))
	case !slices.Contains(supportedDNSPolicy, string(s.DNSPolicy)):
		errs = append(errs, field.NotSupported(p.Child("dnsPolicy"), string(s.DNSPolicy), supportedDNSPolicy))
	}
	if s.ActiveDeadlineSeconds != nil && *s.ActiveDeadlineSeconds <= 0 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *s.ActiveDeadlineSeconds, "must be between 1 and 2147483647, inclusive"))
	}
	for _, k := range sortedKeys(s.NodeSelector) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Child("nodeSelector"), k, msg))
		}
	}
	errs = append(errs, validateTolerations(s.Tolerations, p.Child("tolerations"))...)
	errs = append(errs, validateSysctls(s, p.Child("securityContext", "sysctls"))...)
	if s.ServiceAccountName != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.ServiceAccountName) {
			errs = append(errs, field.Invalid(p.Child("serviceAccountName"), s.ServiceAccountName, msg))
		}
	}
	if s.Hostname != "" {
		for _, msg := range validation.IsDNS1123Label(s.Hostname) {
			errs = append(errs, field.Invalid(p.Child("hostname"), s.Hostname, msg))
		}
	}
	if s.Subdomain != "" {
		for _, msg := range validation.IsDNS1123Label(s.Subdomain) {
			errs = append(errs, field.Invalid(p.Child("subdomain"), s.Subdomain, msg))
		}
	}
	for i, g := range s.SchedulingGates {
		for _, msg := range validation.IsQualifiedName(g.Name) {
			errs = append(errs, field.Invalid(p.Child("schedulingGates").Index(i).Child("name"), g.Name, msg))
		}
	}
	return errs
}

func validateVolumes(vols []Volume, p *field.Path) (map[string]bool, field.ErrorList) {
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range vols {
		v := &vols[i]
		ip := p.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), ""))
		case names[v.Name]:
			errs = append(errs, field.Duplicate(ip.Child("name"), v.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(v.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), v.Name, msg))
			}
		}
		if v.Name != "" {
			names[v.Name] = true
		}
		errs = append(errs, validateVolumeSource(&v.VolumeSource, ip)...)
	}
	return names, errs
}

// validateVolumeSource requires exactly one source.
func validateVolumeSource(vs *VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	rv := reflect.ValueOf(vs).Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		if rv.Field(i).IsNil() {
			continue
		}
		if n > 0 {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			errs = append(errs, field.Forbidden(p.Child(name), "may not specify more than 1 volume type"))
		}
		n++
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a volume type"))
	}
	if vs.ConfigMap != nil && vs.ConfigMap.Name == "" {
		errs = append(errs, field.Required(p.Child("configMap", "name"), ""))
	}
	if vs.Secret != nil && vs.Secret.SecretName == "" {
		errs = append(errs, field.Required(p.Child("secret", "secretName"), ""))
	}
	if vs.PersistentVolumeClaim != nil && vs.PersistentVolumeClaim.ClaimName == "" {
		errs = append(errs, field.Required(p.Child("persistentVolumeClaim", "claimName"), ""))
	}
	if vs.HostPath != nil && vs.HostPath.Path == "" {
		errs = append(errs, field.Required(p.Child("hostPath", "path"), ""))
	}
	return errs
}

func validateContainers(cs []Container, p *field.Path, volumes, names map[string]bool) field.ErrorList {
	var errs field.ErrorList
	for i := range cs {
		c := &cs[i]
		ip := p.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(ip.Child("name"), ""))
		case names[c.Name]:
			errs = append(errs, field.Duplicate(ip.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), c.Name, msg))
			}
		}
		if c.Name != "" {
			names[c.Name] = true
		}
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(ip.Child("image"), ""))
		} else if c.Image != strings.TrimSpace(c.Image) {
			errs = append(errs, field.Invalid(ip.Child("image"), c.Image, "must not have leading or trailing whitespace"))
		}
		if c.ImagePullPolicy != "" && !slices.Contains(supportedPullPolicies, string(c.ImagePullPolicy)) {
			errs = append(errs, field.NotSupported(ip.Child("imagePullPolicy"), string(c.ImagePullPolicy), supportedPullPolicies))
		}
		if c.TerminationMessagePolicy != "" && !slices.Contains(supportedTermMsgPolicys, string(c.TerminationMessagePolicy)) {
			errs = append(errs, field.NotSupported(ip.Child("terminationMessagePolicy"), string(c.TerminationMessagePolicy), supportedTermMsgPolicys))
		}
		errs = append(errs, validateContainerPorts(c.Ports, ip.Child("ports"))...)
		errs = append(errs, validateEnv(c.Env, ip.Child("env"))...)
		for j, ef := range c.EnvFrom {
			if ef.Prefix != "" && !IsEnvVarName(ef.Prefix) {
				errs = append(errs, field.Invalid(ip.Child("envFrom").Index(j).Child("prefix"), ef.Prefix, envVarNameMsg))
			}
		}
		errs = append(errs, validateVolumeMounts(c.VolumeMounts, ip.Child("volumeMounts"), volumes)...)
		errs = append(errs, validateResources(&c.Resources, ip.Child("resources"))...)
		for _, pr := range []struct {
			name  string
			probe *Probe
		}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}, {"startupProbe", c.StartupProbe}} {
			if pr.probe != nil {
				errs = append(errs, validateProbe(pr.probe, ip.Child(pr.name))...)
			}
		}
	}
	return errs
}

func validateProbe(pr *Probe, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	for _, h := range []struct {
		name string
		set  bool
	}{{"exec", pr.Exec != nil}, {"httpGet", pr.HTTPGet != nil}, {"tcpSocket", pr.TCPSocket != nil}, {"grpc", pr.GRPC != nil}} {
		if !h.set {
			continue
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(p.Child(h.name), "may not specify more than 1 handler type"))
		}
		n++
	}
	if n == 0 {
		errs = append(errs, field.Required(p, "must specify a handler type"))
	}
	for _, v := range []struct {
		name string
		val  int32
	}{{"initialDelaySeconds", pr.InitialDelaySeconds}, {"timeoutSeconds", pr.TimeoutSeconds}, {"periodSeconds", pr.PeriodSeconds}, {"successThreshold", pr.SuccessThreshold}, {"failureThreshold", pr.FailureThreshold}} {
		if v.val < 0 {
			errs = append(errs, field.Invalid(p.Child(v.name), int64(v.val), "must be greater than or equal to 0"))
		}
	}
	if pr.HTTPGet != nil {
		errs = append(errs, validatePortRef(pr.HTTPGet.Port, p.Child("httpGet", "port"))...)
	}
	if pr.TCPSocket != nil {
		errs = append(errs, validatePortRef(pr.TCPSocket.Port, p.Child("tcpSocket", "port"))...)
	}
	return errs
}

func validatePortRef(port api.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == api.Int {
		for _, msg := range isValidPortNum(port.IntVal) {
			errs = append(errs, field.Invalid(p, int64(port.IntVal), msg))
		}
		return errs
	}
	for _, msg := range isValidPortName(port.StrVal) {
		errs = append(errs, field.Invalid(p, port.StrVal, msg))
	}
	return errs
}

func validateContainerPorts(ports []ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		ip := p.Index(i)
		if port.Name != "" {
			for _, msg := range isValidPortName(port.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), port.Name, msg))
			}
			if names[port.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			}
			names[port.Name] = true
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(ip.Child("containerPort"), ""))
		} else {
			for _, msg := range isValidPortNum(port.ContainerPort) {
				errs = append(errs, field.Invalid(ip.Child("containerPort"), int64(port.ContainerPort), msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range isValidPortNum(port.HostPort) {
				errs = append(errs, field.Invalid(ip.Child("hostPort"), int64(port.HostPort), msg))
			}
		}
		errs = append(errs, validateProtocol(port.Protocol, ip.Child("protocol"))...)
	}
	return errs
}

func validateProtocol(proto Protocol, p *field.Path) field.ErrorList {
	if proto == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if !slices.Contains(supportedProtocols, string(proto)) {
		return field.ErrorList{field.NotSupported(p, string(proto), supportedProtocols)}
	}
	return nil
}

func validateEnv(env []EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, ev := range env {
		ip := p.Index(i)
		if ev.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else {
			for _, msg := range isEnvVarName(ev.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), ev.Name, msg))
			}
		}
		if ev.ValueFrom != nil {
			n := 0
			vf := ev.ValueFrom
			for _, set := range []bool{vf.FieldRef != nil, vf.ResourceFieldRef != nil, vf.ConfigMapKeyRef != nil, vf.SecretKeyRef != nil, vf.FileKeyRef != nil} {
				if set {
					n++
				}
			}
			if ev.Value != "" && n > 0 {
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "may not be specified when `value` is not empty"))
			}
			if n == 0 {
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"))
			} else if n > 1 {
				errs = append(errs, field.Invalid(ip.Child("valueFrom"), "", "may not have more than one field specified at a time"))
			}
		}
	}
	return errs
}

func validateVolumeMounts(mounts []VolumeMount, p *field.Path, volumes map[string]bool) field.ErrorList {
	var errs field.ErrorList
	paths := map[string]bool{}
	for i, m := range mounts {
		ip := p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else if !volumes[m.Name] {
			errs = append(errs, field.NotFound(ip.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(ip.Child("mountPath"), ""))
		} else if paths[m.MountPath] {
			errs = append(errs, field.Invalid(ip.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths[m.MountPath] = true
		if m.SubPath != "" {
			errs = append(errs, validateLocalDescendingPath(m.SubPath, ip.Child("subPath"))...)
		}
		if m.SubPathExpr != "" {
			if m.SubPath != "" {
				errs = append(errs, field.Invalid(ip.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
			// Checked as written; the node checks the expanded path again.
			errs = append(errs, validateLocalDescendingPath(m.SubPathExpr, ip.Child("subPathExpr"))...)
		}
	}
	return errs
}

// validateLocalDescendingPath requires a relative path with no ".." element,
// one that cannot leave the directory it is joined to.
func validateLocalDescendingPath(p string, fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.HasPrefix(p, "/") {
		errs = append(errs, field.Invalid(fp, p, "must be a relative path"))
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		errs = append(errs, field.Invalid(fp, p, "must not contain '..'"))
	}
	return errs
}

func validateResources(r *ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, part := range []struct {
		name string
		list ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, k := range sortedKeys(part.list) {
			q := part.list[k]
			if _, err := q.MilliValue(); err != nil {
				errs = append(errs, field.Invalid(p.Child(part.name).Key(k), q.String(), "must be a valid quantity"))
				continue
			}
			if v, _ := q.MilliValue(); v < 0 {
				errs = append(errs, field.Invalid(p.Child(part.name).Key(k), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for _, k := range sortedKeys(r.Requests) {
		lim, ok := r.Limits[k]
		if !ok {
			continue
		}
		req := r.Requests[k]
		rv, err1 := req.MilliValue()
		lv, err2 := lim.MilliValue()
		if err1 == nil && err2 == nil && rv > lv {
			errs = append(errs, field.Invalid(p.Child("requests").Key(k), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", k, lim.String())))
		}
	}
	return errs
}

// ValidateTolerations checks tolerations as a pod's spec.tolerations are
// checked (RuntimeClass scheduling tolerations use it too).
func ValidateTolerations(ts []Toleration, p *field.Path) field.ErrorList {
	return validateTolerations(ts, p)
}

func validateTolerations(ts []Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range ts {
		ip := p.Index(i)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(ip.Child("key"), t.Key, msg))
			}
		}
		if t.Key == "" && t.Operator != TolerationOpExists {
			errs = append(errs, field.Invalid(ip.Child("operator"), string(t.Operator), "operator must be Exists when `key` is empty, which means \"match all values and all keys\""))
		}
		if t.TolerationSeconds != nil && t.Effect != TaintEffectNoExecute {
			errs = append(errs, field.Invalid(ip.Child("effect"), string(t.Effect), "effect must be 'NoExecute' when `tolerationSeconds` is set"))
		}
		switch t.Operator {
		case TolerationOpEqual, "":
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, msg))
			}
		case TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(ip.Child("operator"), t.Value, "value must be empty when `operator` is 'Exists'"))
			}
		default:
			errs = append(errs, field.NotSupported(ip.Child("operator"), string(t.Operator), supportedTolerationOps))
		}
		if t.Effect != "" && !slices.Contains(supportedTaintEffects, string(t.Effect)) {
			errs = append(errs, field.NotSupported(ip.Child("effect"), string(t.Effect), supportedTaintEffects))
		}
	}
	return errs
}

// ValidatePodUpdate checks an update of a Pod: the new spec must be valid and may
// differ from the old one only in container images, activeDeadlineSeconds,
// tolerations (additions), removed scheduling gates and terminationGracePeriodSeconds
// (set to 1 from a negative value). Ephemeral containers change only through
// pods/NAME/ephemeralcontainers (ValidatePodEphemeralContainersUpdate).
func ValidatePodUpdate(p, old *Pod) field.ErrorList {
	errs := ValidatePod(p)
	specPath := field.NewPath("spec")
	if old.Spec.ActiveDeadlineSeconds != nil && p.Spec.ActiveDeadlineSeconds == nil {
		errs = append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), nil, "must not update from a positive integer to nil value"))
	}
	if old.Spec.ActiveDeadlineSeconds != nil && p.Spec.ActiveDeadlineSeconds != nil && *p.Spec.ActiveDeadlineSeconds > *old.Spec.ActiveDeadlineSeconds {
		errs = append(errs, field.Invalid(specPath.Child("activeDeadlineSeconds"), *p.Spec.ActiveDeadlineSeconds, "must be less than or equal to previous value"))
	}
	// Copy the mutable fields from the old spec; anything left different is forbidden.
	m := cloneSpec(&p.Spec)
	if len(m.Containers) == len(old.Spec.Containers) {
		for i := range m.Containers {
			m.Containers[i].Image = old.Spec.Containers[i].Image
		}
	}
	if len(m.InitContainers) == len(old.Spec.InitContainers) {
		for i := range m.InitContainers {
			m.InitContainers[i].Image = old.Spec.InitContainers[i].Image
		}
	}
	m.ActiveDeadlineSeconds = old.Spec.ActiveDeadlineSeconds
	if tolerationsAdded(old.Spec.Tolerations, p.Spec.Tolerations) {
		m.Tolerations = old.Spec.Tolerations
	}
	if gatesRemoved(old.Spec.SchedulingGates, p.Spec.SchedulingGates) {
		m.SchedulingGates = old.Spec.SchedulingGates
	}
	if o, n := old.Spec.TerminationGracePeriodSeconds, p.Spec.TerminationGracePeriodSeconds; o != nil && *o < 0 && n != nil && *n == 1 {
		m.TerminationGracePeriodSeconds = o
	}
	if !reflect.DeepEqual(normalizeSpec(m), normalizeSpec(&old.Spec)) {
		errs = append(errs, field.Forbidden(specPath, podUpdateMsg))
	}
	return errs
}

func cloneSpec(s *PodSpec) *PodSpec {
	out, err := roundTrip(s)
	if err != nil {
		c := *s
		return &c
	}
	return out
}

// normalizeSpec gives empty and nil collections the same form for comparison.
func normalizeSpec(s *PodSpec) *PodSpec {
	out, err := roundTrip(s)
	if err != nil {
		return s
	}
	return out
}

func tolerationsAdded(old, cur []Toleration) bool {
	for _, o := range old {
		found := false
		for _, c := range cur {
			if reflect.DeepEqual(o, c) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func gatesRemoved(old, cur []PodSchedulingGate) bool {
	for _, c := range cur {
		if !slices.Contains(old, c) {
			return false
		}
	}
	return true
}

// ValidateService checks a Service's spec.
func ValidateService(s *Service) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	spec := &s.Spec
	switch {
	case spec.Type == "":
		errs = append(errs, field.Required(sp.Child("type"), ""))
	case !slices.Contains(supportedServiceTypes, string(spec.Type)):
		errs = append(errs, field.NotSupported(sp.Child("type"), string(spec.Type), supportedServiceTypes))
	}
	if spec.SessionAffinity != "" && !slices.Contains(supportedAffinity, string(spec.SessionAffinity)) {
		errs = append(errs, field.NotSupported(sp.Child("sessionAffinity"), string(spec.SessionAffinity), supportedAffinity))
	}
	headless := spec.ClusterIP == "None"
	if spec.Type == ServiceTypeExternalName {
		if spec.ExternalName == "" {
			errs = append(errs, field.Required(sp.Child("externalName"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(strings.TrimSuffix(spec.ExternalName, ".")) {
				errs = append(errs, field.Invalid(sp.Child("externalName"), spec.ExternalName, msg))
			}
		}
	} else if len(spec.Ports) == 0 && !headless {
		errs = append(errs, field.Required(sp.Child("ports"), ""))
	}
	names := map[string]bool{}
	for i, port := range spec.Ports {
		ip := sp.Child("ports").Index(i)
		if len(spec.Ports) > 1 && port.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), ""))
		} else if port.Name != "" {
			for _, msg := range validation.IsDNS1123Label(port.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), port.Name, msg))
			}
			if names[port.Name] {
				errs = append(errs, field.Duplicate(ip.Child("name"), port.Name))
			}
			names[port.Name] = true
		}
		for _, msg := range isValidPortNum(port.Port) {
			errs = append(errs, field.Invalid(ip.Child("port"), int64(port.Port), msg))
		}
		errs = append(errs, validateProtocol(port.Protocol, ip.Child("protocol"))...)
		errs = append(errs, validatePortRef(port.TargetPort, ip.Child("targetPort"))...)
		if port.NodePort != 0 {
			if spec.Type != ServiceTypeNodePort && spec.Type != ServiceTypeLoadBalancer {
				errs = append(errs, field.Forbidden(ip.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
			}
			for _, msg := range isValidPortNum(port.NodePort) {
				errs = append(errs, field.Invalid(ip.Child("nodePort"), int64(port.NodePort), msg))
			}
		}
	}
	errs = append(errs, validation.ValidateLabels(spec.Selector, sp.Child("selector"))...)
	return errs
}

// ValidateServiceUpdate checks an update of a Service.
func ValidateServiceUpdate(s, old *Service) field.ErrorList {
	errs := ValidateService(s)
	if old.Spec.ClusterIP != "" && s.Spec.ClusterIP != old.Spec.ClusterIP && s.Spec.Type != ServiceTypeExternalName && old.Spec.Type != ServiceTypeExternalName {
		errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIP"), s.Spec.ClusterIP, "field is immutable"))
	}
	return errs
}

// ValidateConfigMap checks the keys and total size of a ConfigMap.
func ValidateConfigMap(c *ConfigMap) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for _, k := range sortedKeys(c.Data) {
		for _, msg := range isConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
		}
		size += len(c.Data[k])
	}
	for _, k := range sortedKeys(c.BinaryData) {
		for _, msg := range isConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, msg))
		}
		if _, ok := c.Data[k]; ok {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, "duplicate of key present in data"))
		}
		size += len(c.BinaryData[k])
	}
	if size > MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", MaxSecretSize))
	}
	return errs
}

// ValidateConfigMapUpdate also forbids changes to an immutable ConfigMap.
func ValidateConfigMapUpdate(c, old *ConfigMap) field.ErrorList {
	errs := ValidateConfigMap(c)
	if old.Immutable != nil && *old.Immutable {
		if c.Immutable == nil || !*c.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
		}
		if !reflect.DeepEqual(emptyNil(c.Data), emptyNil(old.Data)) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
		}
		if !reflect.DeepEqual(emptyNil(c.BinaryData), emptyNil(old.BinaryData)) {
			errs = append(errs, field.Forbidden(field.NewPath("binaryData"), immutableMsg))
		}
	}
	return errs
}

func emptyNil[V any](m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	return m
}

// Keys required by typed secrets.
const (
	ServiceAccountNameKey = "kubernetes.io/service-account.name"
	DockerConfigKey       = ".dockercfg"
	DockerConfigJSONKey   = ".dockerconfigjson"
	BasicAuthUsernameKey  = "username"
	BasicAuthPasswordKey  = "password"
	SSHAuthPrivateKey     = "ssh-privatekey"
	TLSCertKey            = "tls.crt"
	TLSPrivateKeyKey      = "tls.key"
)

// ValidateSecret checks the keys, size and type-specific keys of a Secret.
func ValidateSecret(s *Secret) field.ErrorList {
	var errs field.ErrorList
	dataPath := field.NewPath("data")
	size := 0
	for _, k := range sortedKeys(s.Data) {
		for _, msg := range isConfigMapKey(k) {
			errs = append(errs, field.Invalid(dataPath.Key(k), k, msg))
		}
		size += len(s.Data[k])
	}
	if size > MaxSecretSize {
		errs = append(errs, field.TooLong(dataPath, "", MaxSecretSize))
	}
	switch s.Type {
	case SecretTypeServiceAccountToken:
		if s.Annotations[ServiceAccountNameKey] == "" {
			errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key(ServiceAccountNameKey), ""))
		}
	case SecretTypeDockercfg:
		if _, ok := s.Data[DockerConfigKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(DockerConfigKey), ""))
		}
	case SecretTypeDockerConfigJson:
		if _, ok := s.Data[DockerConfigJSONKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(DockerConfigJSONKey), ""))
		}
	case SecretTypeBasicAuth:
		_, u := s.Data[BasicAuthUsernameKey]
		_, pw := s.Data[BasicAuthPasswordKey]
		if !u && !pw {
			errs = append(errs, field.Required(dataPath.Key(BasicAuthUsernameKey), ""))
			errs = append(errs, field.Required(dataPath.Key(BasicAuthPasswordKey), ""))
		}
	case SecretTypeSSHAuth:
		if len(s.Data[SSHAuthPrivateKey]) == 0 {
			errs = append(errs, field.Required(dataPath.Key(SSHAuthPrivateKey), ""))
		}
	case SecretTypeTLS:
		if _, ok := s.Data[TLSCertKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(TLSCertKey), ""))
		}
		if _, ok := s.Data[TLSPrivateKeyKey]; !ok {
			errs = append(errs, field.Required(dataPath.Key(TLSPrivateKeyKey), ""))
		}
	default:
		for _, msg := range validation.IsQualifiedName(string(s.Type)) {
			errs = append(errs, field.Invalid(field.NewPath("type"), string(s.Type), msg))
		}
	}
	return errs
}

// ValidateSecretUpdate also keeps type immutable and forbids changes to an
// immutable Secret.
func ValidateSecretUpdate(s, old *Secret) field.ErrorList {
	errs := ValidateSecret(s)
	if s.Type != old.Type {
		errs = append(errs, field.Invalid(field.NewPath("type"), string(s.Type), "field is immutable"))
	}
	if old.Immutable != nil && *old.Immutable {
		if s.Immutable == nil || !*s.Immutable {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), immutableMsg))
		}
		if !reflect.DeepEqual(emptyNil(s.Data), emptyNil(old.Data)) {
			errs = append(errs, field.Forbidden(field.NewPath("data"), immutableMsg))
		}
	}
	return errs
}

// ValidateNamespace checks a Namespace's finalizers.
func ValidateNamespace(n *Namespace) field.ErrorList {
	var errs field.ErrorList
	for i, f := range n.Spec.Finalizers {
		p := field.NewPath("spec", "finalizers").Index(i)
		if !strings.Contains(string(f), "/") && f != FinalizerKubernetes {
			errs = append(errs, field.Invalid(p, string(f), "name is neither a standard finalizer name nor is it fully qualified"))
			continue
		}
		for _, msg := range validation.IsQualifiedName(string(f)) {
			errs = append(errs, field.Invalid(p, string(f), msg))
		}
	}
	return errs
}

// ValidateNode checks a Node's taints.
func ValidateNode(n *Node) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, t := range n.Spec.Taints {
		p := field.NewPath("spec", "taints").Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(p.Child("key"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
		switch {
		case t.Effect == "":
			errs = append(errs, field.Required(p.Child("effect"), ""))
		case !slices.Contains(supportedTaintEffects, string(t.Effect)):
			errs = append(errs, field.NotSupported(p.Child("effect"), string(t.Effect), supportedTaintEffects))
		}
		key := t.Key + ":" + string(t.Effect)
		if seen[key] {
			errs = append(errs, field.Duplicate(p, t.Key+"="+t.Value+":"+string(t.Effect)))
		}
		seen[key] = true
	}
	return errs
}

// ValidateNodeUpdate also keeps spec.podCIDR(s) once set.
func ValidateNodeUpdate(n, old *Node) field.ErrorList {
	errs := ValidateNode(n)
	if old.Spec.PodCIDR != "" && n.Spec.PodCIDR != old.Spec.PodCIDR {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDR"), "node updates may not change podCIDR except from \"\" to valid"))
	}
	return errs
}
