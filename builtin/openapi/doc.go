// Package openapi holds the OpenAPI definitions of the built-in kinds,
// generated from their Go types (internal/openapigen) and embedded: the API
// server publishes them in /openapi/v2 and /openapi/v3 beside the custom
// resources' schemas. They are documentation for clients (kubectl explain,
// client-side validation); the server does not validate or prune built-in
// objects with them.
package openapi

//go:generate go run ../../internal/openapigen/cmd
