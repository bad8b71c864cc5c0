// Package printers formats API objects for people and scripts: server-side
// meta.k8s.io/v1 Tables (kubectl's default and -o wide output), YAML, JSON,
// kind/name lines, and a JSONPath subset (kubectl's -o jsonpath and
// wait --for=jsonpath).
//
// Contract:
//   - Output is deterministic for the same input: JSON is indented with two
//     spaces and object keys sorted; YAML comes from that JSON; table cells are
//     printed in the server's column order.
//   - A TablePrinter prints the header once (the first time it prints rows) and
//     aligns the rows of each Print call with tabs expanded like kubectl (three
//     spaces between columns). Columns with priority > 0 appear only when Wide.
//   - JSONPath: see ParseJSONPath for the supported subset.
//
// Printers write to the io.Writer they are given and keep no other state; a
// TablePrinter is not safe for concurrent use.
package printers
