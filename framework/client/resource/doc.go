// Package resource reads Kubernetes manifests for clients such as `converge
// apply`: from files, directories (optionally recursive) and standard input,
// in YAML (block or flow style, several documents separated by "---") or JSON
// (one value, a stream of values, or an array), and orders them for applying.
//
// Contract:
//   - Read returns objects in input order: paths in the order given, a
//     directory's files in lexical order, a file's documents in file order.
//     Kind "List" (any apiVersion) is expanded into its items.
//   - Empty documents (only whitespace, comments or null) are skipped. A
//     document that is not an object, or lacks apiVersion or kind, is an error
//     that names its source and document index.
//   - In directories only files ending in .yaml, .yml or .json are read; a path
//     given explicitly is read whatever its name.
//   - SortForApply is stable and moves Namespaces first and
//     CustomResourceDefinitions second, so a batch can be applied in one pass.
//
// The package does no I/O besides reading the given paths and reader.
package resource
