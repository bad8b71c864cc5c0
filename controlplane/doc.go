// Package controlplane is the one composition root of Converge. It is the only
// package that assembles the parts: storage (embedded etcd or an external
// cluster), the API server with the built-in resources (builtin/api/all, each
// subresource and admission step wired once in resources.go), security, the
// CRD registry, the controller manager (the one controller list,
// NewControllerManager) with the operators, the scheduler (NewScheduler) and
// node agents (NewNode) with their runtime and service proxy.
//
// `converge up`, `converge apiserver` and testenv call Start; `converge
// controller-manager`, `converge scheduler` and `converge node` call the same
// constructors, so a split deployment runs exactly what the bundled one runs.
// cmd/ only parses flags; internal/archtest keeps it so.
//
// Shape (after etcd's embed): Options with defaults → Start(ctx, opts) returns a
// running *ControlPlane once it serves → Err() reports a fatal failure → Close()
// stops everything and is idempotent.
package controlplane
