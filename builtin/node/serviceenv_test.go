package node

import (
	"maps"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

func svc(ns, name, ip string, ports ...corev1.ServicePort) corev1.Service {
	s := corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: ip, Ports: ports}}
	s.Namespace, s.Name = ns, name
	return s
}

func TestServiceEnv(t *testing.T) {
	kubernetes := svc("default", "kubernetes", "10.0.0.1", corev1.ServicePort{Name: "https", Port: 443, Protocol: "TCP"})
	kubernetesEnv := map[string]string{
		"KUBERNETES_SERVICE_HOST":       "10.0.0.1",
		"KUBERNETES_SERVICE_PORT":       "443",
		"KUBERNETES_SERVICE_PORT_HTTPS": "443",
		"KUBERNETES_PORT":               "tcp://10.0.0.1:443",
		"KUBERNETES_PORT_443_TCP":       "tcp://10.0.0.1:443",
		"KUBERNETES_PORT_443_TCP_PROTO": "tcp",
		"KUBERNETES_PORT_443_TCP_PORT":  "443",
		"KUBERNETES_PORT_443_TCP_ADDR":  "10.0.0.1",
	}
	web := svc("app", "my-web", "10.0.0.7", corev1.ServicePort{Port: 80}, corev1.ServicePort{Name: "metrics-port", Port: 9090, Protocol: "UDP"})
	webEnv := map[string]string{
		"MY_WEB_SERVICE_HOST":              "10.0.0.7",
		"MY_WEB_SERVICE_PORT":              "80",
		"MY_WEB_SERVICE_PORT_METRICS_PORT": "9090",
		"MY_WEB_PORT":                      "tcp://10.0.0.7:80",
		"MY_WEB_PORT_80_TCP":               "tcp://10.0.0.7:80",
		"MY_WEB_PORT_80_TCP_PROTO":         "tcp",
		"MY_WEB_PORT_80_TCP_PORT":          "80",
		"MY_WEB_PORT_80_TCP_ADDR":          "10.0.0.7",
		"MY_WEB_PORT_9090_UDP":             "udp://10.0.0.7:9090",
		"MY_WEB_PORT_9090_UDP_PROTO":       "udp",
		"MY_WEB_PORT_9090_UDP_PORT":        "9090",
		"MY_WEB_PORT_9090_UDP_ADDR":        "10.0.0.7",
	}
	union := func(ms ...map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range ms {
			maps.Copy(out, m)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		services []corev1.Service
		ns       string
		links    bool
		want     map[string]string
	}{
		{"own namespace and the kubernetes service", []corev1.Service{kubernetes, web}, "app", true, union(kubernetesEnv, webEnv)},
		{"links disabled keeps the kubernetes service only", []corev1.Service{kubernetes, web}, "app", false, kubernetesEnv},
		{"other namespaces are ignored", []corev1.Service{web, svc("other", "db", "10.0.0.9", corev1.ServicePort{Port: 5432})}, "app", true, webEnv},
		{"headless and ExternalName services have no variables", []corev1.Service{svc("app", "headless", "None", corev1.ServicePort{Port: 80}), svc("app", "ext", "")}, "app", true, map[string]string{}},
		{"a service without ports has only its host", []corev1.Service{svc("app", "bare", "10.0.0.3")}, "app", true, map[string]string{"BARE_SERVICE_HOST": "10.0.0.3"}},
		{"a namespace's own kubernetes service wins over the default one",
			[]corev1.Service{kubernetes, svc("app", "kubernetes", "10.0.0.5", corev1.ServicePort{Port: 8443})}, "app", true,
			map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.5", "KUBERNETES_SERVICE_PORT": "8443", "KUBERNETES_PORT": "tcp://10.0.0.5:8443",
				"KUBERNETES_PORT_8443_TCP": "tcp://10.0.0.5:8443", "KUBERNETES_PORT_8443_TCP_PROTO": "tcp", "KUBERNETES_PORT_8443_TCP_PORT": "8443", "KUBERNETES_PORT_8443_TCP_ADDR": "10.0.0.5"}},
		{"pods in default see default's services", []corev1.Service{kubernetes, svc("default", "a-b", "10.0.0.4", corev1.ServicePort{Port: 1})}, "default", true,
			union(kubernetesEnv, map[string]string{"A_B_SERVICE_HOST": "10.0.0.4", "A_B_SERVICE_PORT": "1", "A_B_PORT": "tcp://10.0.0.4:1",
				"A_B_PORT_1_TCP": "tcp://10.0.0.4:1", "A_B_PORT_1_TCP_PROTO": "tcp", "A_B_PORT_1_TCP_PORT": "1", "A_B_PORT_1_TCP_ADDR": "10.0.0.4"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serviceEnv(tc.services, tc.ns, tc.links)
			if !maps.Equal(got, tc.want) {
				t.Errorf("serviceEnv =\n%v\nwant\n%v", got, tc.want)
			}
		})
	}
}
