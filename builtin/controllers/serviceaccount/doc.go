// Package serviceaccount is the built-in ServiceAccount controller: every
// active namespace has a ServiceAccount named "default". It is created when a
// namespace appears and again whenever it is deleted; terminating namespaces
// are left alone.
package serviceaccount
