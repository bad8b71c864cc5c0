// Package webhook serves an operator's admission and conversion webhooks
// without cert-manager: typed handlers, an HTTPS server whose certificate comes
// from the control plane's CA and is renewed in place, and the registrations
// (Mutating/ValidatingWebhookConfiguration, CRD spec.conversion) with their
// caBundle kept current.
//
// # Declaring webhooks
//
// An operator implements operators.Webhooks and returns operators.Webhook
// values built here:
//
//   - Validating(path, v, rules...) for a Validator[T] (ValidateCreate,
//     ValidateUpdate, ValidateDelete returning Warnings and an error that
//     denies the request with its message);
//   - Mutating(path, d, rules...) for a Defaulter[T] (Default sets fields; the
//     response is the JSON patch from the received object to the defaulted one);
//   - Raw(type, path, handler, rules...) for an AdmissionHandler that sees the
//     whole AdmissionRequest;
//   - NewConversion(path, crd, converter) for a Converter: hub and spoke
//     (ToHub/FromHub per version) or one ConvertFunc per version pair; Typed
//     adapts a function on Go types;
//   - Converted(apiVersion, converter, handler) serves a handler written for
//     one version (ValidatingAdmission, MutatingAdmission, or any
//     AdmissionHandler) to requests made through the other versions.
//
// # Certificates and registration
//
// Install (used by `converge up` for plugins, by run.Run standalone, or by a
// custom host) starts a Server for the operator: it listens (default a free
// loopback port), asks its Issuer for a serving certificate whose subject
// alternative name is the host the API server dials, serves it through
// tls.Config.GetCertificate and renews it RenewBefore expiry (or when the CA
// changes) without a restart. The Issuer inside `converge up` is the control
// plane's CA (builtin/security/pki, DataDir/pki, also with --insecure); a
// standalone operator uses its own CA kept in its data directory
// (SelfSignedCA). The Server writes the MutatingWebhookConfiguration and
// ValidatingWebhookConfiguration named "<operator>-webhooks" (labelled
// OperatorLabel) and the spec.conversion of each converted CRD with its URL
// and the CA as caBundle, watches them and writes them again when someone
// changes them.
package webhook
