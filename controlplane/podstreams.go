package controlplane

import (
	"fmt"

	"github.com/converge-dev/converge/builtin/podlog"
	"github.com/converge-dev/converge/builtin/podstream"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// podStreams are the pods/exec, pods/attach and pods/portforward
// subresources, keyed by name: they proxy to the node agent running the pod
// with the API server's node client certificate when the control plane has a
// PKI (as pods/log does), over plain TCP otherwise.
func (cp *ControlPlane) podStreams() (map[string]registry.Subresource, error) {
	o := podstream.Options{NodeAddress: podlog.NodeAddressFromStore(cp.store)}
	if cp.pki != nil {
		o.TLS = cp.pki.NodeClientTLS()
	}
	out := map[string]registry.Subresource{}
	for _, k := range []podstream.Kind{podstream.Exec, podstream.Attach, podstream.PortForward} {
		s, err := podstream.New(k, o)
		if err != nil {
			return nil, fmt.Errorf("pods/%s: %w", k, err)
		}
		out[string(k)] = s
	}
	return out, nil
}
