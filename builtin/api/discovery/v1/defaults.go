package v1

import corev1 "github.com/converge-dev/converge/builtin/api/core/v1"

// DefaultEndpointSlice applies Kubernetes' defaults: every port gets a name ("")
// and a protocol (TCP).
func DefaultEndpointSlice(s *EndpointSlice) {
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			name := ""
			p.Name = &name
		}
		if p.Protocol == nil {
			proto := corev1.ProtocolTCP
			p.Protocol = &proto
		}
	}
}
