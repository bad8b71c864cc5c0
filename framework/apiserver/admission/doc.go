// Package admission is the API server's admission chain: mutating plugins run
// first (in order, each seeing the previous one's changes), then validating ones,
// on create, update (including status and other subresources), and delete.
//
// The server calls Admit after defaulting and before validation, and Validate
// after validation and before storage; a mutated object is canonicalized and
// validated again. Plugins return API errors (apierrors.StatusError) to refuse a
// request; any other error becomes 403 Forbidden.
//
// Webhooks (webhook.go) call admission webhooks with AdmissionReview v1 (the
// wire types of package framework/api/review) over HTTPS, honouring rules,
// namespace and object selectors, failurePolicy, timeoutSeconds and
// sideEffects; mutating webhooks answer with JSON patches.
package admission
