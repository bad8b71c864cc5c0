// Package rootca is the root CA publisher, Kubernetes' root-ca-cert-publisher:
// every active namespace has a ConfigMap kube-root-ca.crt whose ca.crt is the
// cluster CA bundle, so that pods can verify the API server (the ServiceAccount
// admission plugin projects it into every pod). It is created when a namespace
// appears, recreated when deleted and reset when its data is changed;
// terminating namespaces are left alone.
package rootca
