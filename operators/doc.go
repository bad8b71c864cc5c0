// Package operators is the operator SDK contract: what an operator exports so
// that Converge can run it, and the helpers every host (converge up, a custom
// binary, the standalone runner) uses to start one.
//
// An operator is a value implementing Operator: a Name, its CustomResourceDefinitions
// as embedded YAML (CRDs) and Setup, which registers its controllers with a
// manager.Manager. Optional behaviour is a separate one-method interface found
// by type assertion: HealthChecks (extra /healthz checks), RBACRules (the
// permissions it needs, for documentation and future authorization) and
// Webhooks (validating, mutating and conversion webhooks, served and registered
// by package operators/webhook).
//
// # The same package runs three ways
//
//   - As a Go plugin loaded into `converge up`: a `main` package built with
//     `converge operator build DIR -o NAME.so` exports the symbol Operator
//     (`var Operator operators.Operator = myop.New()`) or New
//     (`func New() operators.Operator`); see SymbolOperator, SymbolNew and
//     package operators/loader.
//   - Compiled into a custom binary: call Install with the binary's manager.
//   - Standalone against any API server: run.Main(myop.New()) in the operator's
//     own main package (package operators/run).
//
// # Install
//
// Install is the one start-up sequence all hosts share: apply the operator's
// CRDs through the manager's client (create, or update when they exist), wait
// until every CRD is Established (so the kinds are served before any informer
// lists them), then call Setup with panics recovered, then register its health
// checks. It returns the first failure, wrapped with the operator's name; a
// failed operator leaves its CRDs installed and registers nothing further.
//
// Hosts that serve webhooks (`converge up`, run.Run) call webhook.Install of
// package operators/webhook instead: for an operator implementing Webhooks it
// starts the HTTPS server, points the CRDs at their conversion webhooks
// (InstallWith's PrepareCRDs) and registers the admission webhooks before
// Setup (BeforeSetup); otherwise it is Install.
//
// This package imports only framework/ (checked by internal/archtest).
package operators
