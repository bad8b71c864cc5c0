// Package crd serves apiextensions.k8s.io/v1 CustomResourceDefinitions: the CRD
// resource itself (Resource), its validation, and the registry entries built for
// the custom resources a CRD defines (CustomResources). Custom resources are
// converted between versions by rewriting apiVersion (strategy None) or by the
// CRD's conversion webhook (strategy Webhook: a ConversionReview of
// apiextensions.k8s.io/v1 over HTTPS, trusting caBundle; conversion.go).
package crd
