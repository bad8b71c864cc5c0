// Package generate is `converge operator generate`: it reads Go API types
// with kubebuilder markers and writes the CustomResourceDefinitions and the
// ClusterRole that controller-gen (sigs.k8s.io/controller-tools) would write
// for them, so that a kubebuilder project's `make manifests` keeps working.
//
// Packages are loaded with golang.org/x/tools/go/packages (syntax and types of
// the named packages; the doc comments of types from other packages, such as
// k8s.io/apimachinery's metav1.Condition, are read from their source files).
// A package is an API group version when it carries +groupName; every type in
// it that embeds TypeMeta and ObjectMeta (of metav1 or of Converge's
// framework/api) is a kind. The schema rules are in the schema package, the
// marker syntax in markers, the role in rbac.
//
// Errors name the file and line of the marker or field at fault; every error
// of a run is reported, not only the first.
package generate
