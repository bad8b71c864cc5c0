package controlplane

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/converge-dev/converge/builtin/security"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/builtin/servicenet"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/inprocess"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/framework/storage"
	"github.com/converge-dev/converge/framework/storage/encryption"
)

// setupSecurity creates the PKI and the authentication, authorization, admission
// and audit configuration when Secure is set. Without it the API server still
// answers the access-review resources (everything is allowed) instead of storing
// them, and runs the admission webhooks. Both modes get the same webhook
// plugins (webhookAdmission).
func (cp *ControlPlane) setupSecurity() (apiserver.Security, error) {
	opts := cp.opts
	webhookMutating, webhookValidating := cp.webhookAdmission()
	mutating, validating := cp.quotaAdmission([]admission.Mutator{webhookMutating},
		[]admission.Validator{cp.admissionPolicy(), webhookValidating})
	if !opts.Secure {
		sec := security.ReviewsOnly()
		sec.Admission = &admission.Chain{Mutators: mutating, Validators: validating}
		return sec, nil
	}
	if opts.DataDir == "" && opts.PKIDir == "" {
		return apiserver.Security{}, fmt.Errorf("controlplane: Secure needs DataDir or PKIDir for its certificates")
	}
	sans := opts.ExtraSANs
	if opts.BindAddress != "" && opts.BindAddress != "0.0.0.0" && opts.BindAddress != "::" {
		sans = append([]string{opts.BindAddress}, sans...)
	}
	if ip, err := servicenet.APIServerServiceIP(opts.ServiceCIDR); err == nil {
		sans = append(slices.Clip(sans), ip.String()) // in-cluster clients reach the kubernetes Service's IP
	}
	po := pki.Options{Dir: cp.pkiDir(), ExtraSANs: sans}
	if opts.PKIDir != "" && opts.DataDir != "" {
		// A shared PKIDir: the serving certificate (this server's names) is its own.
		po.ServingDir = filepath.Join(opts.DataDir, "pki")
	}
	p, err := pki.Ensure(po)
	if err != nil {
		return apiserver.Security{}, fmt.Errorf("set up certificates: %w", err)
	}
	sec, err := security.New(security.Options{
		PKI: p, TokenFile: opts.TokenFile, AuditLogPath: opts.AuditLogPath, AuditPolicyFile: opts.AuditPolicyFile,
		MaxMutatingInFlight: opts.MaxMutatingInFlight, MaxReadOnlyInFlight: opts.MaxReadOnlyInFlight,
		PerUserInFlightPercent: opts.PerUserInFlightPercent, MaxWatchesPerUser: opts.MaxWatchesPerUser,
		FlowControl:     cp.newFlowControl(),
		ServiceAccounts: cp.serviceAccount, Logger: cp.log.WithName("security"),
		Tokens:   []filters.TokenAuthenticator{cp.dashboard.TokenAuthenticator()},
		Mutating: mutating, Validating: validating,
	})
	if err != nil {
		return apiserver.Security{}, fmt.Errorf("set up security: %w", err)
	}
	cp.pki, cp.security = p, sec
	return sec.APIServer(), nil
}

// pkiDir is where the certificates live: PKIDir, else DataDir/pki.
func (cp *ControlPlane) pkiDir() string {
	if cp.opts.PKIDir != "" {
		return cp.opts.PKIDir
	}
	if cp.opts.DataDir == "" {
		return ""
	}
	return filepath.Join(cp.opts.DataDir, "pki")
}

// serviceAccount reads a ServiceAccount from storage for the ServiceAccount
// admission plugin (nil when there is none): storage, not the watch cache, so
// that a pod created right after its ServiceAccount is admitted.
func (cp *ControlPlane) serviceAccount(ctx context.Context, namespace, name string) ([]byte, error) {
	kv, err := cp.store.Get(ctx, "/registry/core/serviceaccounts/"+namespace+"/"+name)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return kv.Value, nil
}

// equivalentResources are the other served versions of a resource, for
// admission webhooks with matchPolicy Equivalent.
func (cp *ControlPlane) equivalentResources(gvr api.GroupVersionResource) []admission.EquivalentResource {
	if cp.registry == nil {
		return nil
	}
	return admission.RegistryEquivalents(cp.registry)(gvr)
}

// encryptedStore wraps the store with encryption at rest when EncryptionKeys
// or EncryptionConfigFile is set.
func (cp *ControlPlane) encryptedStore(s storage.Interface) (storage.Interface, error) {
	var cfg *encryption.Configuration
	var err error
	switch {
	case cp.opts.EncryptionConfigFile != "" && len(cp.opts.EncryptionKeys) > 0:
		return nil, fmt.Errorf("controlplane: set EncryptionKeys or EncryptionConfigFile, not both")
	case cp.opts.EncryptionConfigFile != "":
		cfg, err = encryption.LoadFile(cp.opts.EncryptionConfigFile)
	case len(cp.opts.EncryptionKeys) > 0:
		cfg, err = encryption.FromKeys(cp.opts.EncryptionKeys)
	default:
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	out, err := encryption.Wrap(s, cfg)
	if err != nil {
		return nil, fmt.Errorf("set up encryption at rest: %w", err)
	}
	return out, nil
}

// componentConfig is the client configuration of an in-process component: in
// secure mode a client certificate for user in groups (its own identity,
// authorized by its default ClusterRole or the Node authorizer), otherwise the
// same as ClientConfig.
func (cp *ControlPlane) componentConfig(user string, groups ...string) (*client.Config, error) {
	if cp.pki == nil {
		return cp.ClientConfig(user)
	}
	cert, key, err := cp.pki.IssueClientCert(user, groups, 0)
	if err != nil {
		return nil, fmt.Errorf("issue client certificate for %s: %w", user, err)
	}
	return &client.Config{Host: cp.url, UserAgent: user,
		TLS: rest.TLSConfig{CAData: cp.pki.CAPEM(), CertData: cert, KeyData: key}}, nil
}

// inProcessConfig is componentConfig for a component that runs in this
// process: its requests call the API server's handler directly, as user in
// groups (the identity its certificate proves), through the whole filter
// chain — authentication sees the in-process identity, then audit, priority
// and fairness, authorization and admission as for any request — without TLS,
// TCP and HTTP/2 framing on both sides. Host and the certificate stay in the
// configuration for anything that dials the server itself.
func (cp *ControlPlane) inProcessConfig(user string, groups ...string) (*client.Config, error) {
	cfg, err := cp.componentConfig(user, groups...)
	if err != nil || cp.pki == nil {
		return cfg, err
	}
	cfg.Transport = inprocess.New(cp.server.Handler(), filters.User{Name: user, Groups: groups})
	return cfg, nil
}

// nodeLogTLS is the local node agent's log server configuration: HTTPS
// requiring the API server's client certificate in secure mode, nil (plain
// HTTP) otherwise.
func (cp *ControlPlane) nodeLogTLS(hosts ...string) (*tls.Config, error) {
	if cp.pki == nil {
		return nil, nil
	}
	return pki.NodeLogServerTLS(cp.pki.CAPEM(), hosts)
}

// serverTLSConfig is the PKI's serving configuration with the CA appended to
// the presented chain, so that a joining node can find the CA by its hash
// (converge node --ca-cert-hash).
func (cp *ControlPlane) serverTLSConfig() *tls.Config {
	cfg := cp.pki.ServerTLSConfig()
	if cp.frontProxyCA != nil {
		// The front proxy's client certificates (requestheader
		// authentication, aggregator.go) are signed by its own CA.
		cfg.ClientCAs = cp.pki.CAPool()
		cfg.ClientCAs.AppendCertsFromPEM(cp.frontProxyCA.CAPEM())
	}
	block, _ := pem.Decode(cp.pki.CAPEM())
	if block == nil || cfg.GetCertificate == nil {
		return cfg
	}
	get := cfg.GetCertificate
	cfg.GetCertificate = func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		c, err := get(hello)
		if err != nil || c == nil {
			return c, err
		}
		withCA := *c
		withCA.Certificate = append(slices.Clone(c.Certificate), block.Bytes)
		return &withCA, nil
	}
	return cfg
}
