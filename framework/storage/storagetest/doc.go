// Package storagetest holds the conformance suite for storage.Interface. Every
// implementation runs RunConformance from its own tests against a real backend;
// the suite checks the contract documented in package storage: create-if-absent,
// compare-and-swap update and delete, consistent paginated lists at a revision,
// counting, ordered watches from now and from history with previous values,
// compaction, and watch shutdown on context cancellation.
//
// Subtests use unique key prefixes, so the backend may be shared by all of them.
// The compaction subtests compact the whole store and run last, one at a time,
// after every other subtest has finished; a backend shared with other tests that
// read old revisions must not run concurrently with RunConformance.
package storagetest
