package controlplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	admissionregistrationv1 "github.com/converge-dev/converge/builtin/api/admissionregistration/v1"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver"
	"github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/operators/webhook"
)

// withWebhookAdmission gives a control plane without Secure the dynamic
// admission webhooks (Mutating- and ValidatingWebhookConfigurations) that
// Secure has in its own chain, so operator webhooks work in testenv and in
// `converge up --insecure` too.
func (cp *ControlPlane) withWebhookAdmission(sec *apiserver.Security) {
	if cp.opts.Secure || !sec.Admission.Empty() {
		return
	}
	list := func(ctx context.Context, resource string) ([][]byte, error) {
		if cp.server == nil {
			return nil, errors.New("controlplane: the API server is not created yet")
		}
		items, _, err := cp.server.CachedObjects(ctx, admissionregistrationv1.GroupVersion.WithResource(resource), "")
		if errors.Is(err, apiserver.ErrNotServed) {
			return nil, nil
		}
		return items, err
	}
	namespaceLabels := func(ctx context.Context, namespace string) (map[string]string, error) {
		items, _, err := cp.server.CachedObjects(ctx, api.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "")
		if err != nil {
			return nil, err
		}
		for _, b := range items {
			var ns struct{ Metadata api.ObjectMeta }
			if json.Unmarshal(b, &ns) == nil && ns.Metadata.Name == namespace {
				return ns.Metadata.Labels, nil
			}
		}
		return nil, fmt.Errorf("namespace %q not found", namespace)
	}
	mutating := func(ctx context.Context) ([]admission.Hook, error) {
		items, err := list(ctx, "mutatingwebhookconfigurations")
		if err != nil {
			return nil, err
		}
		cs, err := decodeItems[admissionregistrationv1.MutatingWebhookConfiguration](items)
		if err != nil {
			return nil, err
		}
		return admissionregistrationv1.MutatingHooks(cs), nil
	}
	validating := func(ctx context.Context) ([]admission.Hook, error) {
		items, err := list(ctx, "validatingwebhookconfigurations")
		if err != nil {
			return nil, err
		}
		cs, err := decodeItems[admissionregistrationv1.ValidatingWebhookConfiguration](items)
		if err != nil {
			return nil, err
		}
		return admissionregistrationv1.ValidatingHooks(cs), nil
	}
	warn := func(_ context.Context, text string) {
		cp.log.V(1).Info("Admission webhook warning", "warning", text)
	}
	sec.Admission = &admission.Chain{
		Mutators: []admission.Mutator{&admission.Webhooks{Mutating: true, Hooks: mutating, NamespaceLabels: namespaceLabels, Warn: warn,
			Equivalents: cp.equivalentResources}},
		Validators: []admission.Validator{&admission.Webhooks{Hooks: validating, NamespaceLabels: namespaceLabels, Warn: warn,
			Equivalents: cp.equivalentResources}},
	}
}

func decodeItems[T any](items [][]byte) ([]T, error) {
	out := make([]T, 0, len(items))
	for _, b := range items {
		var t T
		if err := json.Unmarshal(b, &t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
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
