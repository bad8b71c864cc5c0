// Package crd serves apiextensions.k8s.io/v1 CustomResourceDefinitions: the CRD
// resource itself (Resource), its validation, and the registry entries built for
// the custom resources a CRD defines (CustomResources).
package crd
