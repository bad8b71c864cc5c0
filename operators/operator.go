package operators

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/healthz"
	"github.com/converge-dev/converge/framework/manager"
)

// Operator is what an operator package exports.
type Operator interface {
	// Name identifies the operator: lowercase, DNS-label-like ("postgres").
	// It names its logger, its leader-election Lease and its status entry.
	Name() string
	// CRDs returns the operator's CustomResourceDefinitions, each one YAML or
	// JSON document (usually embedded with //go:embed). They are applied and
	// Established before Setup runs.
	CRDs() [][]byte
	// Setup registers the operator's controllers (and any other Runnables)
	// with mgr. It must not block: the manager starts what was added.
	Setup(mgr *manager.Manager) error
}

// HealthChecks is implemented by operators with their own liveness checks,
// served on the host's /healthz as "<operator>-<name>".
type HealthChecks interface {
	HealthChecks() map[string]healthz.Checker
}

// RBACRules is implemented by operators that declare the permissions they
// need. Converge does not enforce authorization for in-process operators yet;
// the rules document the operator and feed generated manifests.
type RBACRules interface {
	RBACRules() []PolicyRule
}

// PolicyRule is one permission, as in a Kubernetes (Cluster)Role.
type PolicyRule struct {
	APIGroups []string `json:"apiGroups"`
	Resources []string `json:"resources"`
	Verbs     []string `json:"verbs"`
}

// Webhooks is implemented by operators that serve admission (validating,
// mutating) or CRD conversion webhooks. Hosts that support webhooks
// (`converge up`, run.Run, or any host calling webhook.Install from package
// operators/webhook) serve them over HTTPS with a certificate issued by the
// control plane's CA (standalone: the operator's own CA), register the
// admission webhooks in the MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration named after the operator, point each
// conversion webhook's CRD at it (spec.conversion.strategy Webhook) and keep
// the caBundle of all of them current. Package operators/webhook builds Webhook
// values from typed handlers (ValidateCreate/Update/Delete, Default,
// conversion functions). A host without webhook support (operators.Install
// alone) ignores this interface.
type Webhooks interface {
	Webhooks() []Webhook
}

// WebhookType says what a webhook does.
type WebhookType string

// Webhook types.
const (
	Mutating   WebhookType = "Mutating"
	Validating WebhookType = "Validating"
	// Conversion webhooks answer ConversionReviews for one CRD (Webhook.CRD).
	Conversion WebhookType = "Conversion"
)

// Webhook is one webhook endpoint and how it is registered.
type Webhook struct {
	// Type is Mutating, Validating or Conversion.
	Type WebhookType
	// Path is the URL path it is served on ("/validate-widgets"); unique
	// within the operator.
	Path string
	// Handler serves AdmissionReview (admission) or ConversionReview
	// (conversion) requests.
	Handler http.Handler

	// Name is the webhook's name in its configuration, a DNS subdomain with at
	// least three labels (admission only; default
	// "<path without slashes>.<operator>.operators.converge.dev").
	Name string
	// Rules select the requests the webhook is called for (admission only;
	// required).
	Rules []WebhookRule
	// FailurePolicy is "Fail" (default) or "Ignore" (admission only).
	FailurePolicy string
	// SideEffects is "None" (default) or "NoneOnDryRun" (admission only).
	SideEffects string
	// TimeoutSeconds bounds each call (admission only; default 10, at most 30).
	TimeoutSeconds int32
	// NamespaceSelector and ObjectSelector narrow the requests (admission
	// only; nil matches everything).
	NamespaceSelector, ObjectSelector *api.LabelSelector

	// CRD is the name of the CustomResourceDefinition ("widgets.example.com")
	// whose versions this webhook converts (Conversion only; required). The CRD
	// must be one of the operator's CRDs.
	CRD string
}

// WebhookRule selects requests by operation (CREATE, UPDATE, DELETE, CONNECT
// or *), API group, version, resource ("widgets", "widgets/status", "*") and
// scope ("Cluster", "Namespaced" or "*", the default), as in
// admissionregistration.k8s.io/v1 RuleWithOperations.
type WebhookRule struct {
	Operations  []string `json:"operations"`
	APIGroups   []string `json:"apiGroups"`
	APIVersions []string `json:"apiVersions"`
	Resources   []string `json:"resources"`
	Scope       string   `json:"scope,omitempty"`
}

// Plugin symbol convention: the plugin's main package exports one of these.
const (
	// SymbolOperator names a package-level variable of type Operator:
	//	var Operator operators.Operator = myop.New()
	SymbolOperator = "Operator"
	// SymbolNew names a constructor:
	//	func New() operators.Operator { return myop.New() }
	SymbolNew = "New"
)

// ErrNoSymbol is returned by FromSymbols when neither symbol is exported.
var ErrNoSymbol = errors.New("operators: plugin exports neither Operator nor New")

// FromSymbols finds the Operator a plugin exports, given its symbol lookup
// (plugin.Plugin.Lookup, adapted to return any). It accepts, in this order,
// `var Operator operators.Operator` (or a variable of any type implementing
// Operator) and `func New() operators.Operator`.
func FromSymbols(lookup func(name string) (any, error)) (Operator, error) {
	if sym, err := lookup(SymbolOperator); err == nil {
		switch v := sym.(type) {
		case *Operator: // var Operator operators.Operator
			if *v == nil {
				return nil, fmt.Errorf("operators: symbol %s is nil", SymbolOperator)
			}
			return *v, nil
		case Operator: // var Operator = &myop.Op{} (the pointer itself implements it)
			return v, nil
		default:
			return nil, fmt.Errorf("operators: symbol %s has type %T, want operators.Operator", SymbolOperator, sym)
		}
	}
	if sym, err := lookup(SymbolNew); err == nil {
		switch f := sym.(type) {
		case func() Operator:
			op := f()
			if op == nil {
				return nil, fmt.Errorf("operators: %s returned nil", SymbolNew)
			}
			return op, nil
		default:
			return nil, fmt.Errorf("operators: symbol %s has type %T, want func() operators.Operator", SymbolNew, sym)
		}
	}
	return nil, ErrNoSymbol
}
