package clusterdns

import (
	"net/netip"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
)

// ProxyName is the service.kubernetes.io/service-proxy-name of the DNS
// Service: the cluster DNS server serves its address itself, so the service
// proxy leaves it alone.
const ProxyName = "converge-dns"

// LabelServiceProxyName is Kubernetes' label for Services another proxy
// than kube-proxy serves.
const LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// ServiceObject is the kube-system/kube-dns Service the control plane creates
// at bootstrap, with cluster IP ip (servicenet.ClusterDNSIP): ports dns 53/UDP
// and dns-tcp 53/TCP, labels k8s-app=kube-dns (what tools look for) and
// LabelServiceProxyName. It has no selector and no endpoints: every machine's
// Server answers on its address.
func ServiceObject(ip netip.Addr) *corev1.Service {
	return &corev1.Service{
		TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: api.ObjectMeta{Namespace: "kube-system", Name: "kube-dns", Labels: map[string]string{
			"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS",
			LabelServiceProxyName: ProxyName,
		}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: ip.String(), ClusterIPs: []string{ip.String()},
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: api.FromInt(53)},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: api.FromInt(53)},
			},
		},
	}
}
