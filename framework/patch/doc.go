// Package patch applies and computes patches on JSON documents: RFC 6902 JSON
// patch, RFC 7386 JSON merge patch, and Kubernetes strategic merge patch with the
// patch schema read from Go struct tags. The API server uses it to serve PATCH
// requests; clients use CreateMergePatch to compute merge patches.
//
// JSON patch and merge patch apply exactly as the Kubernetes API server applies
// them (with gopkg.in/evanphx/json-patch.v4), not only as the RFCs say: clients
// depend on the differences, listed on JSONPatch and MergePatch. The bench
// module checks the agreement against that library (bench/compat/patch).
//
// Contract:
//
//   - Every function takes and returns JSON bytes and never modifies its inputs.
//   - Numbers are carried as their original text (json.Number): integers of any
//     size and decimals survive a round trip exactly.
//   - Output is compact JSON with object keys sorted and HTML characters not
//     escaped. Key order of the input is not preserved (it has no meaning in JSON).
//   - Errors are *Error values that match one of three sentinels with errors.Is:
//     ErrBadPatch (the patch itself is malformed: the server answers 400),
//     ErrPatchConflict (a well-formed patch cannot be applied to this document, for
//     example a missing path or a failed "test": 422), and ErrInvalidDocument (the
//     document or an input of CreateMergePatch is not valid JSON).
//   - Strategic merge patch takes its schema from the struct tags of a Go type:
//     `json`, `patchStrategy` ("merge", "replace", "retainKeys", combined with
//     commas) and `patchMergeKey`. A Schema memoises what it learns per Go type and
//     is safe for concurrent use; build one per kind and keep it.
//
// The package depends only on the standard library; it must not import the API
// server or storage packages.
package patch
