package controlplane

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/converge-dev/converge/builtin/aggregator"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// The API aggregation layer (builtin/aggregator): requests of group versions
// whose APIService names a Service are proxied to it, inside the API
// server's filters (after authentication and authorization), with the
// front-proxy client certificate of a CA of its own (PKI dir/front-proxy,
// as kube-apiserver's --requestheader-client-ca-file and
// --proxy-client-cert-file), which the API server also accepts with
// X-Remote-* headers (requestheader authentication). The
// extension-apiserver-authentication ConfigMap in kube-system tells
// aggregated servers built on k8s.io/apiserver whom to trust.

// frontProxyDir holds the front-proxy CA, under the PKI dir.
const frontProxyDir = "front-proxy"

// setupAggregator creates the aggregator, its front-proxy credentials (when
// the control plane has a PKI dir) and installs its proxy in sec's filters.
func (cp *ControlPlane) setupAggregator(sec *apiserver.Security) error {
	o := aggregator.Options{
		List: func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error) {
			if cp.server == nil {
				return nil, 0, errors.New("controlplane: the API server is not created yet")
			}
			return cp.server.CachedObjects(ctx, gvr, namespace)
		},
		Dial: cp.serviceDial, Local: cp.servesLocally, Logger: cp.log.WithName("aggregator"),
		Added: cp.kickAPIServices,
	}
	if dir := cp.pkiDir(); dir != "" {
		ca, err := pki.EnsureCA(pki.Options{Dir: filepath.Join(dir, frontProxyDir)})
		if err != nil {
			return fmt.Errorf("set up the front-proxy CA: %w", err)
		}
		certPEM, keyPEM, err := ca.IssueClientCert(aggregator.FrontProxyUserName, nil, 365*24*time.Hour)
		if err != nil {
			return fmt.Errorf("issue the front-proxy client certificate: %w", err)
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return fmt.Errorf("load the front-proxy client certificate: %w", err)
		}
		o.ClientCertificate = &cert
		cp.frontProxyCA = ca
		if sec.Filters.Authenticator != nil {
			sec.Filters.Authenticator = filters.Union(
				aggregator.NewRequestHeader(ca.CAPool(), []string{aggregator.FrontProxyUserName}),
				sec.Filters.Authenticator)
		}
	}
	cp.aggregator = aggregator.New(o)
	inner := sec.Filters.Inner
	sec.Filters.Inner = func(h http.Handler) http.Handler {
		h = cp.aggregator.Wrap(h)
		if inner != nil {
			h = inner(h)
		}
		return h
	}
	return nil
}

// servedGroups is the set of group versions (and groups, version "") the
// registry serves, at one registry version.
type servedGroups struct {
	version int64
	set     map[api.GroupVersion]bool
}

// servesLocally reports whether the API server serves version of group (any
// version when version is "").
func (cp *ControlPlane) servesLocally(group, version string) bool {
	if cp.registry == nil {
		return false
	}
	v := cp.registry.Version()
	sg, _ := cp.served.Load().(*servedGroups)
	if sg == nil || sg.version != v {
		sg = &servedGroups{version: v, set: map[api.GroupVersion]bool{}}
		for _, r := range cp.registry.All() {
			sg.set[r.GroupVersion] = true
			sg.set[api.GroupVersion{Group: r.GroupVersion.Group}] = true
		}
		cp.served.Store(sg)
	}
	return sg.set[api.GroupVersion{Group: group, Version: version}]
}

// bootstrapExtensionAuth writes kube-system/extension-apiserver-authentication
// (as kube-apiserver's cluster-authentication-trust-controller does) and the
// Role and RoleBinding that let aggregated servers read it.
func (cp *ControlPlane) bootstrapExtensionAuth(ctx context.Context) error {
	data := map[string]string{}
	if cp.pki != nil {
		data["client-ca-file"] = string(cp.pki.CAPEM())
	}
	if cp.frontProxyCA != nil {
		list := func(v []string) string { b, _ := json.Marshal(v); return string(b) }
		data["requestheader-client-ca-file"] = string(cp.frontProxyCA.CAPEM())
		data["requestheader-username-headers"] = list(aggregator.UsernameHeaders)
		data["requestheader-uid-headers"] = list(aggregator.UIDHeaders)
		data["requestheader-group-headers"] = list(aggregator.GroupHeaders)
		data["requestheader-extra-headers-prefix"] = list(aggregator.ExtraHeaderPrefix)
		data["requestheader-allowed-names"] = list([]string{aggregator.FrontProxyUserName})
	}
	const cmPath = "/api/v1/namespaces/kube-system/configmaps"
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "extension-apiserver-authentication", "namespace": "kube-system"}, "data": data}
	err := cp.loopback(ctx, http.MethodPost, cmPath, cm, nil)
	if le, ok := err.(loopbackError); ok && le.code == http.StatusConflict {
		err = cp.loopback(ctx, http.MethodPut, cmPath+"/extension-apiserver-authentication", cm, nil)
	}
	if err != nil {
		return fmt.Errorf("write configmap kube-system/extension-apiserver-authentication: %w", err)
	}
	role := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "extension-apiserver-authentication-reader", "namespace": "kube-system",
			"labels":      map[string]any{"kubernetes.io/bootstrapping": "rbac-defaults"},
			"annotations": map[string]any{"rbac.authorization.kubernetes.io/autoupdate": "true"}},
		"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"},
			"resourceNames": []any{"extension-apiserver-authentication"}, "verbs": []any{"get", "list", "watch"}}}}
	binding := map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": "system::extension-apiserver-authentication-reader", "namespace": "kube-system",
			"labels":      map[string]any{"kubernetes.io/bootstrapping": "rbac-defaults"},
			"annotations": map[string]any{"rbac.authorization.kubernetes.io/autoupdate": "true"}},
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "extension-apiserver-authentication-reader"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-controller-manager"},
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-scheduler"}}}
	for path, obj := range map[string]any{
		"/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles":        role,
		"/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings": binding,
	} {
		err := cp.loopback(ctx, http.MethodPost, path, obj, nil)
		if le, ok := err.(loopbackError); ok && le.code == http.StatusConflict {
			continue
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", path, err)
		}
	}
	return nil
}
