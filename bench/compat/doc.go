// Package compat holds wire-compatibility acceptance tests: unmodified
// client-go and controller-runtime programs, with their default settings
// (protobuf request bodies for built-in kinds), against an in-process Converge
// API server (testenv). Run with
//
//	go test -count=1 -v ./compat/...
//
// Every request and response is recorded by a logging RoundTripper; when a
// test fails it prints the failing exchanges (method, URL, content types,
// status and bodies, protobuf bodies in hex) so that a server bug can be
// reported precisely. Set COMPAT_TRACE=1 to print every exchange.
package compat
