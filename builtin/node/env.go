package node

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/expand"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// fieldRefValue resolves a downward API field path of pod.
func fieldRefValue(pod *corev1.Pod, hostIP, podIP, path string) (string, error) {
	if m := regexp.MustCompile(`^metadata\.(labels|annotations)\['(.+)'\]$`).FindStringSubmatch(path); m != nil {
		if m[1] == "labels" {
			return pod.Labels[m[2]], nil
		}
		return pod.Annotations[m[2]], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return pod.UID, nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// formatMap renders labels/annotations as the downward API does: key="value" lines.
func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k + "=" + strconv.Quote(m[k]))
	}
	return b.String()
}

// resourceFieldValue resolves a resourceFieldRef of container c.
func (a *Agent) resourceFieldValue(pod *corev1.Pod, c corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	if ref.ContainerName != "" {
		for _, cc := range slices.Concat(pod.Spec.InitContainers, pod.Spec.Containers) {
			if cc.Name == ref.ContainerName {
				c = cc
			}
		}
	}
	kind, res, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	var q api.Quantity
	var set bool
	if kind == "limits" {
		q, set = c.Resources.Limits[res]
		if !set {
			q, set = a.capacity()[res] // unset limits default to node allocatable
		}
	} else {
		q, set = c.Resources.Requests[res]
	}
	if !set {
		return "0", nil
	}
	v, err := q.Float64()
	if err != nil {
		return "", err
	}
	div := 1.0
	if !ref.Divisor.IsZero() {
		if div, err = ref.Divisor.Float64(); err != nil {
			return "", err
		}
	}
	return strconv.FormatInt(int64(math.Ceil(v/div)), 10), nil
}

// configError marks problems that are CreateContainerConfigError.
type configError struct{ msg string }

func (e configError) Error() string { return e.msg }

func (w *podWorker) configMap(ctx context.Context, ns, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	if err := w.a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, configError{fmt.Sprintf("configmap %q not found", name)}
		}
		return nil, fmt.Errorf("get configmap %s/%s: %w", ns, name, err)
	}
	return cm, nil
}

func (w *podWorker) secret(ctx context.Context, ns, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := w.a.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, configError{fmt.Sprintf("secret %q not found", name)}
		}
		return nil, fmt.Errorf("get secret %s/%s: %w", ns, name, err)
	}
	return s, nil
}

// environment builds a container's environment in Kubernetes' order: envFrom,
// then env (each value $(VAR)-expanded against what came before and the
// service variables), plus POD_IP and HOSTNAME when the pod does not set them,
// then the service variables (serviceenv.go) the pod does not set.
func (w *podWorker) environment(ctx context.Context, pod *corev1.Pod, c corev1.Container) (env []string, vals map[string]string, implicitPodIP bool, err error) {
	podIP := w.ip()
	hostIP := w.a.opts.InternalIP
	svcEnv, err := w.serviceEnvOf(ctx, pod)
	if err != nil {
		return nil, nil, false, err
	}
	var order []string
	vals = map[string]string{}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = v
	}
	for _, ef := range c.EnvFrom {
		switch {
		case ef.ConfigMapRef != nil:
			cm, err := w.configMap(ctx, pod.Namespace, ef.ConfigMapRef.Name)
			if err != nil {
				if _, ok := err.(configError); ok && ef.ConfigMapRef.Optional != nil && *ef.ConfigMapRef.Optional {
					continue
				}
				return nil, nil, false, err
			}
			keys := make([]string, 0, len(cm.Data))
			for k := range cm.Data {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if corev1.IsEnvVarName(ef.Prefix + k) {
					set(ef.Prefix+k, cm.Data[k])
				}
			}
		case ef.SecretRef != nil:
			s, err := w.secret(ctx, pod.Namespace, ef.SecretRef.Name)
			if err != nil {
				if _, ok := err.(configError); ok && ef.SecretRef.Optional != nil && *ef.SecretRef.Optional {
					continue
				}
				return nil, nil, false, err
			}
			keys := make([]string, 0, len(s.Data))
			for k := range s.Data {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if corev1.IsEnvVarName(ef.Prefix + k) {
					set(ef.Prefix+k, string(s.Data[k]))
				}
			}
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand.Expand(e.Value, expand.MapLookup(vals, svcEnv)))
			continue
		}
		vf := e.ValueFrom
		switch {
		case vf.FieldRef != nil:
			v, err := fieldRefValue(pod, hostIP, podIP, vf.FieldRef.FieldPath)
			if err != nil {
				return nil, nil, false, configError{err.Error()}
			}
			set(e.Name, v)
		case vf.ResourceFieldRef != nil:
			v, err := w.a.resourceFieldValue(pod, c, vf.ResourceFieldRef)
			if err != nil {
				return nil, nil, false, configError{err.Error()}
			}
			set(e.Name, v)
		case vf.ConfigMapKeyRef != nil:
			ref := vf.ConfigMapKeyRef
			optional := ref.Optional != nil && *ref.Optional
			cm, err := w.configMap(ctx, pod.Namespace, ref.Name)
			if err != nil {
				if _, ok := err.(configError); ok && optional {
					continue
				}
				return nil, nil, false, err
			}
			v, ok := cm.Data[ref.Key]
			if !ok {
				if b, bok := cm.BinaryData[ref.Key]; bok {
					v, ok = string(b), true
				}
			}
			if !ok {
				if optional {
					continue
				}
				return nil, nil, false, configError{fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", ref.Key, pod.Namespace, ref.Name)}
			}
			set(e.Name, v)
		case vf.SecretKeyRef != nil:
			ref := vf.SecretKeyRef
			optional := ref.Optional != nil && *ref.Optional
			s, err := w.secret(ctx, pod.Namespace, ref.Name)
			if err != nil {
				if _, ok := err.(configError); ok && optional {
					continue
				}
				return nil, nil, false, err
			}
			v, ok := s.Data[ref.Key]
			if !ok {
				if optional {
					continue
				}
				return nil, nil, false, configError{fmt.Sprintf("couldn't find key %s in Secret %s/%s", ref.Key, pod.Namespace, ref.Name)}
			}
			set(e.Name, string(v))
		default:
			return nil, nil, false, configError{fmt.Sprintf("env %s: unsupported valueFrom", e.Name)}
		}
	}
	if _, ok := vals["POD_IP"]; !ok {
		set("POD_IP", podIP)
		implicitPodIP = true
	}
	if _, ok := vals["HOSTNAME"]; !ok {
		set("HOSTNAME", w.hostname(pod))
	}
	svcKeys := make([]string, 0, len(svcEnv))
	for k := range svcEnv {
		if _, ok := vals[k]; !ok {
			svcKeys = append(svcKeys, k)
		}
	}
	slices.Sort(svcKeys)
	for _, k := range svcKeys {
		set(k, svcEnv[k])
	}
	env = make([]string, 0, len(order))
	for _, k := range order {
		env = append(env, k+"="+vals[k])
	}
	return env, vals, implicitPodIP, nil
}

// containerSpec resolves a container into a runtime spec.
func (w *podWorker) containerSpec(ctx context.Context, c corev1.Container, attempt int) (cri.ContainerSpec, error) {
	pod := w.current()
	// While the pod's network is set up (startNetwork), a spec that needs
	// the pod IP waits for it; others are made now and finished by the
	// runtime before the container is created (finishSpec).
	pending := w.sandboxPending()
	if pending && needsPodIP(c) {
		if err := w.waitSandbox(ctx); err != nil {
			return cri.ContainerSpec{}, err
		}
		pending = false
	}
	env, vals, implicitPodIP, err := w.environment(ctx, pod, c)
	if err != nil {
		return cri.ContainerSpec{}, err
	}
	lookup := expand.MapLookup(vals)
	var args, imageArgs []string
	for _, s := range c.Command {
		args = append(args, expand.Expand(s, lookup))
	}
	for _, s := range c.Args {
		if len(c.Command) > 0 {
			args = append(args, expand.Expand(s, lookup))
		} else {
			imageArgs = append(imageArgs, expand.Expand(s, lookup))
		}
	}
	mounts, err := w.mounts(pod, c, vals)
	if err != nil {
		return cri.ContainerSpec{}, configError{err.Error()}
	}
	spec := cri.ContainerSpec{
		PodUID: pod.UID, PodNamespace: pod.Namespace, PodName: pod.Name, Name: c.Name, Hostname: w.hostname(pod),
		Image: c.Image, Args: args, ImageArgs: imageArgs, Env: env, WorkingDir: c.WorkingDir,
		Mounts: mounts, PodIP: w.ip(), Attempt: attempt, Stdin: c.Stdin, StdinOnce: c.StdinOnce, TTY: c.TTY,
	}
	w.sandboxMounts(&spec)
	if pending {
		spec.Finish = w.finishSpec(implicitPodIP)
	}
	if err := w.terminationMessageMount(&spec, c, attempt); err != nil {
		return cri.ContainerSpec{}, err
	}
	spec.LogPath = filepath.Join(w.a.opts.RootDir, "logs", pod.Namespace+"_"+pod.Name+"_"+pod.UID, c.Name, strconv.Itoa(attempt)+".log")
	if sc := pod.Spec.SecurityContext; sc != nil {
		spec.RunAsUser, spec.RunAsGroup = sc.RunAsUser, sc.RunAsGroup
		spec.Sysctls = podSysctls(pod)
	}
	if sc := c.SecurityContext; sc != nil {
		spec.ReadOnlyRootfs = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
		spec.NoNewPrivileges = noNewPrivileges(sc)
		if sc.RunAsUser != nil {
			spec.RunAsUser = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			spec.RunAsGroup = sc.RunAsGroup
		}
	}
	if q, ok := c.Resources.Limits["cpu"]; ok {
		spec.Resources.CPUMilli, _ = q.MilliValue()
	}
	if q, ok := c.Resources.Limits["memory"]; ok {
		spec.Resources.MemoryBytes, _ = q.Value()
	}
	return spec, nil
}

// noNewPrivileges is the kubelet's rule for no_new_privs: only an explicit
// allowPrivilegeEscalation false, and never for a privileged container.
func noNewPrivileges(sc *corev1.SecurityContext) bool {
	return sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation &&
		(sc.Privileged == nil || !*sc.Privileged)
}
