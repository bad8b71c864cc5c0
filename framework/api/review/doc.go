// Package review holds the wire types of apiextensions.k8s.io/v1
// ConversionReview, shared by the API server, which sends them to CRD
// conversion webhooks, and the operator SDK, which serves those webhooks.
package review
