// Package idlemem returns the Go heap's unused memory to the operating system
// when the process goes quiet after a burst of work.
//
// The Go runtime keeps the memory a burst grew the heap to: up to the GC's
// goal (twice the live heap at the default GOGC) stays resident as garbage not
// yet collected and free spans not yet scavenged, because the next burst would
// need it again. A server that then sits idle holds that memory for nothing.
// Run watches the heap's allocation rate; once a burst that allocated at least
// a GC cycle's worth (the live heap) is followed by a quiet spell, it collects
// and returns every free page (debug.FreeOSMemory) — once per burst, never
// while the process keeps allocating. It is the policy of the JVM's periodic
// GC (JEP 346, "promptly return unused committed memory"), for a Go heap.
//
// What stays resident is the live heap, the free slots of the spans it
// occupies, stacks and the runtime's own metadata; the next burst faults its
// pages back in and the GC sizes the heap as before.
package idlemem
