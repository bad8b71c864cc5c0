// Package controlplane is the composition root of Converge: it wires storage
// (embedded etcd or an external cluster), the API server with the built-in
// resources, and — as later parts land — the CRD registry, controllers, scheduler
// and node agents. cmd/converge and testenv both use it, so tests run what ships.
//
// Shape (after etcd's embed): Options with defaults → Start(ctx, opts) returns a
// running *ControlPlane once it serves → Err() reports a fatal failure → Close()
// stops everything and is idempotent.
package controlplane
