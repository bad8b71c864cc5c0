package operators

import (
	"errors"
	"fmt"
	"net/http"

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

// Webhooks is implemented by operators that serve admission webhooks. The
// Converge API server does not call admission webhooks yet, so hosts ignore
// this interface today; it is part of the contract so that operators written
// now keep compiling when it does.
type Webhooks interface {
	Webhooks() []Webhook
}

// WebhookType says whether a webhook mutates or only validates.
type WebhookType string

// Webhook types.
const (
	Mutating   WebhookType = "Mutating"
	Validating WebhookType = "Validating"
)

// Webhook is one admission webhook endpoint.
type Webhook struct {
	// Type is Mutating or Validating.
	Type WebhookType
	// Path is the URL path it is served on ("/validate-widgets").
	Path string
	// Handler serves AdmissionReview requests.
	Handler http.Handler
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
