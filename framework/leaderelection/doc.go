// Package leaderelection elects one leader among replicas with a
// coordination.k8s.io/v1 Lease.
//
// The Lease is read and written through the client with optimistic
// concurrency: every write carries the resourceVersion that was read, so of two
// candidates writing at once the server accepts one and answers Conflict to the
// other. That conflict is the lock; there is no other coordination.
//
// Protocol (the one client-go uses, so Converge and Kubernetes replicas can
// share a Lease):
//
//   - A candidate may take the Lease when it does not exist, when its
//     holderIdentity is empty (released), or when the record has not changed for
//     leaseDurationSeconds as measured on the candidate's own clock since it
//     first observed that record (no clock synchronisation is assumed).
//   - Taking sets holderIdentity, acquireTime, renewTime and
//     leaseDurationSeconds and increments leaseTransitions.
//   - The leader renews (updates renewTime) every RetryPeriod. If it cannot
//     renew within RenewDeadline of the start of its last successful renewal
//     (pending requests are cancelled then), it considers leadership lost;
//     RenewDeadline is shorter than LeaseDuration so that it stops acting
//     before others may take over (fencing), by LeaseDuration-RenewDeadline.
//     LeaseDuration is a whole number of seconds, as the Lease stores.
//   - Release clears holderIdentity (and sets leaseDurationSeconds to 1) so that
//     another candidate takes over on its next try instead of waiting for expiry.
//
// Defaults: LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s.
//
// An Elector is used by one goroutine: Acquire, then Renew, then Release.
package leaderelection
