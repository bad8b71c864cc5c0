// Package node is the Node authorizer and the NodeRestriction admission plugin
// of kube-apiserver, for node agents that authenticate as system:node:NAME in
// group system:nodes.
//
// The Authorizer lets a node read the Secrets, ConfigMaps,
// PersistentVolumeClaims and ServiceAccounts that pods bound to it reference,
// request tokens for those ServiceAccounts, and do what the system:node rules (Rules) allow,
// with writes to Nodes and node Leases limited by name to its own. Anything
// else gets no opinion, so RBAC decides (and denies without a binding).
//
// Restriction (admission) checks what only the objects show: a node may create
// only pods bound to itself, and update, patch, delete or evict only pods
// bound to itself; it may create, change or delete only its own Node (and may
// not set node-restriction.kubernetes.io/ labels) and its own Lease in
// kube-node-lease.
package node
