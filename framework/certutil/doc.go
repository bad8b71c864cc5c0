// Package certutil holds the small certificate-file helpers shared by the
// control plane's PKI (builtin/security/pki) and the operator SDK's webhook
// certificates (operators/webhook), which may import only framework/.
package certutil
