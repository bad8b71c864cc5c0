// Package review holds the wire types of the reviews the API server sends to
// webhooks: admission.k8s.io/v1 AdmissionReview (admission webhooks) and
// apiextensions.k8s.io/v1 ConversionReview (CRD conversion webhooks). They are
// shared by the API server, which sends them, and the operator SDK, which
// serves those webhooks.
package review
