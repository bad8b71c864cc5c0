// Package predicate filters events before they reach an event handler.
//
// A Predicate sees every event of a watched kind and returns false to drop it.
// The ...Changed predicates only filter updates: Added and Deleted events always
// pass, and an update passes when the compared field differs between Old and
// Object. Predicates run on the informer's delivery goroutine: keep them cheap and
// free of I/O, and never modify the objects (they are shared with the cache).
//
// Predicates are an optimisation, never a correctness tool: a reconciler must
// give the same outcome whichever events reached it.
package predicate
