// Package v1 is the test corpus of `converge operator generate`: types that
// use every marker it reads. bench/ runs controller-gen over the same types
// (with metav1 in place of framework/api) and compares the CRDs.
// +kubebuilder:object:generate=true
// +groupName=corpus.converge.dev
package v1
