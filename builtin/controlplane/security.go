package controlplane

import (
	"fmt"
	"path/filepath"

	"github.com/converge-dev/converge/builtin/security"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/apiserver"
)

// setupSecurity creates the PKI and the authentication, authorization, admission
// and audit configuration when Secure is set. Without it the API server still
// answers the access-review resources (everything is allowed) instead of storing
// them.
func (cp *ControlPlane) setupSecurity() (apiserver.Security, error) {
	opts := cp.opts
	if !opts.Secure {
		return security.ReviewsOnly(), nil
	}
	if opts.DataDir == "" {
		return apiserver.Security{}, fmt.Errorf("controlplane: Secure needs DataDir for its certificates")
	}
	sans := opts.ExtraSANs
	if opts.BindAddress != "" && opts.BindAddress != "0.0.0.0" && opts.BindAddress != "::" {
		sans = append([]string{opts.BindAddress}, sans...)
	}
	p, err := pki.Ensure(pki.Options{Dir: filepath.Join(opts.DataDir, "pki"), ExtraSANs: sans})
	if err != nil {
		return apiserver.Security{}, fmt.Errorf("set up certificates: %w", err)
	}
	sec, err := security.New(security.Options{
		PKI: p, TokenFile: opts.TokenFile, AuditLogPath: opts.AuditLogPath, AuditPolicyFile: opts.AuditPolicyFile,
		MaxMutatingInFlight: opts.MaxMutatingInFlight, MaxReadOnlyInFlight: opts.MaxReadOnlyInFlight,
		Logger: cp.log.WithName("security"),
	})
	if err != nil {
		return apiserver.Security{}, fmt.Errorf("set up security: %w", err)
	}
	cp.pki, cp.security = p, sec
	return sec.APIServer(), nil
}
