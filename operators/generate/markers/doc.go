// Package markers finds and parses kubebuilder marker comments
// (`// +name`, `// +name=value`, `// +name:arg=value,arg2=value`) with
// controller-tools' syntax and association rules:
//
//   - a type's or field's markers are those in its doc comment and in the
//     comment group right above that doc comment (separated by a blank line);
//   - package markers (+groupName, +versionName, +kubebuilder:rbac, ...) are
//     those in the package doc comment and in comment groups attached to no
//     type or field, anywhere in the package's files;
//   - only markers in the Registry are parsed; others (+genclient,
//     +kubebuilder:object:root, ...) are ignored, as controller-gen does.
//
// Values follow controller-tools: strings are bare (up to `,` `;` `}`) or
// quoted ("..." with Go escapes, or `raw`); lists are `{a,b}` or `a;b`;
// `Any` arguments (+kubebuilder:default, Enum items) guess their type from the
// text: quoted → string, true/false → bool, a number → int or float, `{k: v}`
// → map, `{a,b}` → list, anything else → string.
package markers
