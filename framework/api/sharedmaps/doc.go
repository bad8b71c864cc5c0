// Package sharedmaps lets caches keep one copy of equal string maps (labels,
// selectable fields, annotations): objects of one workload carry equal ones,
// and each small Go map costs ≈300 bytes however few its entries. A Table
// remembers a bounded number of maps by content; the maps it hands out are
// shared, so neither the table nor its callers may modify them.
package sharedmaps
