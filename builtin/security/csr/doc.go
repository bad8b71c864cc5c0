// Package csr holds the CertificateSigningRequest approver and signer that
// kube-controller-manager runs (csrapproving, csrsigning), as one controller.
//
// The approver approves node client certificate requests
// (kubernetes.io/kube-apiserver-client-kubelet, subject system:node:NAME in
// system:nodes, client usages only, no SANs) when the requester may create
// certificatesigningrequests/nodeclient (bootstrap tokens, through
// system:bootstrappers) or, for a node renewing its own certificate,
// certificatesigningrequests/selfnodeclient; every other request waits for
// a human (kubectl certificate approve). The signer signs approved requests
// of kubernetes.io/kube-apiserver-client-kubelet and
// kubernetes.io/kube-apiserver-client with the cluster CA, or marks them
// Failed when the request breaks the signer's rules.
package csr
