// Package bootstrap implements bootstrap tokens and the node join that uses
// them, as kubeadm and the kubelet's TLS bootstrap do.
//
// A token is "ID.SECRET" (6 and 16 characters of [a-z0-9]) stored as a Secret
// bootstrap-token-ID of type bootstrap.kubernetes.io/token in kube-system
// (NewSecret). TokenAuthenticator accepts it as user system:bootstrap:ID in
// group system:bootstrappers (plus the Secret's auth-extra-groups) until its
// expiration. Join is the node side: it finds the cluster CA by the hash of its
// public key (CACertHash), asks for a node client certificate with a
// CertificateSigningRequest authenticated by the token, and waits for the
// control plane to approve and sign it.
package bootstrap
