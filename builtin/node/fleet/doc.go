// Package fleet runs a fleet of simulated nodes (KWOK-style) in one
// process: thousands of Nodes that register Ready, renew their Leases and
// move pods bound to them through their lifecycle without running anything.
//
// Contract:
//   - Nodes "<NamePrefix><i>" (i from 0) are created (or adopted) with the
//     configured capacity, the usual kubernetes.io labels (plus
//     topology.kubernetes.io/zone round-robin over Zones) and Ready=True.
//   - Lease renewals are spread evenly over LeaseRenewInterval: node i renews
//     at offset i·interval/N, so N nodes cost N/interval writes per second,
//     never a burst. Node status is re-reported every NodeStatusReportInterval,
//     spread the same way.
//   - One shared pod informer serves every simulated node (no watch per node).
//     A pod bound to a fleet node becomes Running and Ready (with a pod IP from
//     the node's 10.x.y.0/24 range) PodStartDelay after it was seen; a pod owned
//     by a Job becomes Succeeded JobCompletionDelay after it started, when that
//     delay is set. A pod with a deletionTimestamp is deleted with
//     gracePeriodSeconds=0.
//   - Start(ctx) blocks until ctx ends; the Nodes stay (they turn NotReady when
//     their Leases expire).
package fleet
