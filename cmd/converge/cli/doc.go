// Package cli implements the converge command line with cobra. It is a thin layer:
// every command parses flags, builds Options for a library package and reports
// the result; no logic that the libraries should own lives here.
package cli
