package node

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
)

// Service environment variables, as the kubelet injects them: for each
// Service with a cluster IP in the pod's namespace (when
// spec.enableServiceLinks is not false) and for the "kubernetes" Service of
// the default namespace (always), {NAME}_SERVICE_HOST, {NAME}_SERVICE_PORT (the
// first port), {NAME}_SERVICE_PORT_{PORTNAME} (named ports) and the Docker link
// variables {NAME}_PORT, {NAME}_PORT_{PORT}_{PROTO}[_PROTO|_PORT|_ADDR]; NAME is
// the Service name upper-cased with '-' turned into '_'. The container's own
// env and envFrom win over them, and $(VAR) references may use them.

// masterService is the Service whose variables every pod gets.
const masterService = "kubernetes"

// envVarName turns a Service or port name into its variable-name form.
func envVarName(s string) string { return strings.ToUpper(strings.ReplaceAll(s, "-", "_")) }

// serviceEnv returns the service environment variables of a pod in namespace
// ns from services (those of ns and of the default namespace).
func serviceEnv(services []corev1.Service, ns string, enableServiceLinks bool) map[string]string {
	chosen := map[string]*corev1.Service{}
	for i := range services {
		s := &services[i]
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == "None" {
			continue
		}
		switch {
		case s.Namespace == "default" && s.Name == masterService:
			if _, ok := chosen[s.Name]; !ok {
				chosen[s.Name] = s
			}
		case s.Namespace == ns && enableServiceLinks:
			chosen[s.Name] = s
		}
	}
	env := map[string]string{}
	for _, s := range chosen {
		prefix := envVarName(s.Name)
		env[prefix+"_SERVICE_HOST"] = s.Spec.ClusterIP
		if len(s.Spec.Ports) == 0 {
			continue
		}
		env[prefix+"_SERVICE_PORT"] = strconv.Itoa(int(s.Spec.Ports[0].Port))
		for _, p := range s.Spec.Ports {
			if p.Name != "" {
				env[prefix+"_SERVICE_PORT_"+envVarName(p.Name)] = strconv.Itoa(int(p.Port))
			}
		}
		for i, p := range s.Spec.Ports {
			proto := string(corev1.ProtocolTCP)
			if p.Protocol != "" {
				proto = string(p.Protocol)
			}
			lower := strings.ToLower(proto)
			url := lower + "://" + net.JoinHostPort(s.Spec.ClusterIP, strconv.Itoa(int(p.Port)))
			if i == 0 {
				env[prefix+"_PORT"] = url
			}
			pp := fmt.Sprintf("%s_PORT_%d_%s", prefix, p.Port, strings.ToUpper(proto))
			env[pp] = url
			env[pp+"_PROTO"] = lower
			env[pp+"_PORT"] = strconv.Itoa(int(p.Port))
			env[pp+"_ADDR"] = s.Spec.ClusterIP
		}
	}
	return env
}

// serviceEnvOf reads the Services a pod's environment depends on and returns
// its service variables.
func (w *podWorker) serviceEnvOf(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	var svcs []corev1.Service
	if links {
		l := &corev1.ServiceList{}
		// From the watch cache (resourceVersion 0), like the kubelet's informer.
		if err := w.a.c.List(ctx, l, client.InNamespace(pod.Namespace), &client.ListOptions{ResourceVersion: "0"}); err != nil {
			return nil, fmt.Errorf("list services for the environment: %w", err)
		}
		svcs = l.Items
	}
	if !links || pod.Namespace != "default" {
		s := &corev1.Service{}
		err := w.a.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: masterService}, s)
		if client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("get service default/%s for the environment: %w", masterService, err)
		}
		if err == nil {
			svcs = append(svcs, *s)
		}
	}
	return serviceEnv(svcs, pod.Namespace, links), nil
}
