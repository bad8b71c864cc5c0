// Package defaultservicecidr keeps the default ServiceCIDR, "kubernetes", as
// every Kubernetes API server does (its defaultservicecidr controller): the
// networking.k8s.io/v1 object that publishes the range Service cluster IPs
// come from (the API server's --service-cidr).
//
// A Reconciler creates the object when it is missing (also after a user
// deleted it), with spec.cidrs the configured range, and sets its Ready
// condition to True ("Kubernetes default Service CIDR is ready") when the
// condition is absent or Unknown and the spec matches the configuration. It
// never changes a spec that differs from the configuration (the CIDRs are
// immutable; an operator resolves the mismatch) nor a Ready=False someone
// else set; both are logged once. An object being deleted is left alone.
// Every API server runs one; they compute the same object, so their writes
// converge (a conflict is retried at the next pass).
package defaultservicecidr
