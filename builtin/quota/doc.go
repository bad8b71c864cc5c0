// Package quota is Kubernetes' ResourceQuota system without its controller:
// the evaluators that say what an object consumes (pods: compute requests and
// limits; services: load balancers and node ports; persistent volume claims:
// storage, per storage class; any resource: count/<resource>.<group>), the
// scopes that select the objects a quota covers, ResourceList arithmetic, and
// the admission plugin (Admission) that refuses what would exceed a quota.
//
// # Admission contract
//
// Admission runs last among the validating plugins. For a create (or an update
// that can change usage) it finds the quotas of the namespace whose status.hard
// limits something the object consumes and whose scopes select it; a quota the
// controller has not computed yet (no status) is not enforced, as in
// Kubernetes. It checks used+requested ≤ hard for every quota and then charges
// the request by writing status.used of each quota with the resourceVersion it
// read: a conflicting write (another request charged meanwhile) reads the
// quota again and re-checks, so two concurrent requests never both take the
// last unit. Refusals are 403 Forbidden with Kubernetes' messages
// ("exceeded quota: NAME, requested: pods=1, used: pods=1, limited: pods=1").
// Charges are not released by admission: the resourcequota controller
// recomputes status.used from the objects (deletes, terminal pods, failed
// creates).
package quota
