// Package fields owns field selectors: the syntax of ?fieldSelector=
// (Parse), matching against an object's selectable fields and checking that a
// selector only uses the fields a resource supports (CheckSupported).
//
// Syntax: comma-separated terms (AND), each "field=value", "field==value" or
// "field!=value". In values, '\' escapes ',', '=' and '\' (EscapeValue); the
// field is everything before the first operator and is taken verbatim, with no
// whitespace trimming. Empty terms are ignored; the empty string selects
// everything. A field missing from the matched set counts as "".
//
// Contract: selectors are immutable values, safe for concurrent use. Their
// requirements are sorted by their text, so String is canonical and
// Parse(s.String()) yields an equal selector. Parse and CheckSupported errors
// read like Kubernetes' and are meant to be returned as 400 BadRequest bodies.
package fields
