package controlplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/converge-dev/converge/builtin/security"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/builtin/serviceresolver"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/operators/webhook"
)

// webhookAdmission returns the admission plugins that call the webhooks of
// the stored Mutating- and ValidatingWebhookConfigurations (read from the API
// server's watch cache), for the admission chain of either mode.
func (cp *ControlPlane) webhookAdmission() (admission.Mutator, admission.Validator) {
	list := func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error) {
		if cp.server == nil {
			return nil, 0, errors.New("controlplane: the API server is not created yet")
		}
		return cp.server.CachedObjects(ctx, gvr, namespace)
	}
	warn := func(_ context.Context, text string) {
		cp.log.V(1).Info("Admission webhook warning", "warning", text)
	}
	mutating, validating := security.WebhookAdmission(list, cp.equivalentResources, warn)
	mutating.Dial = cp.serviceDial
	validating.Dial = cp.serviceDial
	return mutating, validating
}

// serviceDial connects the API server's clients of webhooks (admission,
// conversion) and aggregated API servers: NAME.NAMESPACE.svc:PORT goes to
// one of the Service's ready endpoints (builtin/serviceresolver), read from
// the watch cache.
func (cp *ControlPlane) serviceDial(ctx context.Context, network, addr string) (net.Conn, error) {
	r := serviceresolver.Resolver{List: func(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error) {
		if cp.server == nil {
			return nil, 0, errors.New("controlplane: the API server is not created yet")
		}
		return cp.server.CachedObjects(ctx, gvr, namespace)
	}}
	return r.Dial(ctx, network, addr)
}

// webhookOptions configures the webhook servers of operators: their
// certificates come from the control plane's CA (DataDir/pki, the CA of
// Secure, the default of `converge up`; created on first use without Secure). Without a DataDir there is no
// issuer, and operators that declare webhooks fail to start.
func (cp *ControlPlane) webhookOptions() webhook.Options {
	if cp.pki != nil {
		return webhook.Options{Issuer: cp.pki}
	}
	if cp.pkiDir() == "" {
		return webhook.Options{}
	}
	return webhook.Options{Issuer: &lazyCA{dir: cp.pkiDir()}}
}

// lazyCA loads (or creates) the CA of a control plane without Secure when an
// operator first asks for a webhook certificate.
type lazyCA struct {
	dir  string
	once sync.Once
	p    *pki.PKI
	err  error
}

func (l *lazyCA) load() (*pki.PKI, error) {
	l.once.Do(func() { l.p, l.err = pki.EnsureCA(pki.Options{Dir: l.dir}) })
	return l.p, l.err
}

func (l *lazyCA) IssueServingCert(hosts []string, validity time.Duration) ([]byte, []byte, error) {
	p, err := l.load()
	if err != nil {
		return nil, nil, fmt.Errorf("control plane CA for webhooks: %w", err)
	}
	return p.IssueServingCert(hosts, validity)
}

func (l *lazyCA) CAPEM() []byte {
	p, err := l.load()
	if err != nil {
		return nil
	}
	return p.CAPEM()
}
