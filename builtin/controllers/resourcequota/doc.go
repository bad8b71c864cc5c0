// Package resourcequota is the built-in ResourceQuota controller: it keeps
// every quota's status.hard equal to spec.hard and status.used equal to what
// the namespace's objects consume (package quota's evaluators), so that
// admission, which only adds charges, sees usage released by deletions and
// pods that ended.
//
// A quota is recalculated when it is created or its spec (or a status that
// no longer matches its spec) changes, when an object it may count is
// deleted, a pod ends or starts terminating, a service changes type or a
// claim its request, every ResyncPeriod, and a second after a recount found
// less than the quota held (admission may have charged an object the cache
// did not show yet: Kubernetes waits for the resync). Pods, services, claims,
// configmaps, secrets and quotas are read from the informer cache; any other
// resource named by count/<resource>.<group> (custom ones included) gets a
// metadata-only informer (a monitor) the first time a quota counts it, whose
// deletions trigger recalculation like the others'.
package resourcequota
