package controlplane

import (
	"net/http"

	"github.com/converge-dev/converge/builtin/dashboard"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// newDashboard builds the web dashboard (served under /ui/ on the API port).
// Its login-code endpoint authenticates callers with the API server's own
// authenticator (set up later by setupSecurity), and the tokens it issues
// join the API server's token authenticators.
func (cp *ControlPlane) newDashboard() *dashboard.Dashboard {
	o := dashboard.Options{Logger: cp.log.WithName("dashboard")}
	if cp.opts.Secure {
		o.Authenticator = filters.AuthenticatorFunc(func(r *http.Request) (*filters.User, bool, error) {
			return cp.security.APIServer().Filters.Authenticator.Authenticate(r)
		})
	}
	return dashboard.New(o)
}

// DashboardURL is the dashboard's address.
func (cp *ControlPlane) DashboardURL() string { return cp.url + dashboard.Prefix }

// DashboardLoginURL is a one-time login link to the dashboard for the admin
// (converge up prints it): valid once, for a few minutes.
func (cp *ControlPlane) DashboardLoginURL() (string, error) {
	code, err := cp.dashboard.LoginCode(filters.User{Name: pki.AdminUser, Groups: []string{pki.AdminGroup}})
	if err != nil {
		return "", err
	}
	return cp.url + dashboard.Prefix + "login?code=" + code, nil
}
