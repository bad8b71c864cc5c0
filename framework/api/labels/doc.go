// Package labels owns label selectors: the query-string syntax of
// ?labelSelector= (Parse), the structured api.LabelSelector of specs
// (FromLabelSelector, FormatLabelSelector) and matching against an object's
// labels, with Kubernetes' semantics and error messages.
//
// Syntax (comma = AND, whitespace allowed around tokens):
//
//	k=v  k==v  k!=v  k in (a,b)  k notin (a,b)  k  !k  k>N  k<N
//
// != and notin also match objects without the key; > and < compare base-10
// integers and never match a missing or non-integer label. Keys are qualified
// names (optional DNS subdomain prefix and '/', name of at most 63 characters);
// values are label values (at most 63 characters, possibly empty).
//
// Contract: selectors are immutable values, safe for concurrent use. A
// selector's requirements are sorted by key (then by their text), so String is
// canonical and Parse(s.String()) yields an equal selector for every selector
// Parse returns. Parse errors read like Kubernetes' and are meant to be
// returned as 400 BadRequest bodies.
package labels
