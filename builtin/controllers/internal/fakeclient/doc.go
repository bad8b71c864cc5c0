// Package fakeclient is an in-memory stand-in for the reads and writes a
// built-in controller makes, for unit tests of reconcilers: it implements the
// Get and List of cache.Reader and the Create, Update, Patch, Delete and
// Status().Update/Patch of client.Client on a map of objects.
//
// It keeps the server's rules that reconcilers depend on: NotFound and
// AlreadyExists answers, resourceVersions bumped on every write and checked
// on Update (Conflict), generateName, uids, delete preconditions, and status
// writes that change only .status. It runs no admission, validation,
// defaulting or garbage collection; behaviour suites use the real control
// plane (internal/controllertest) for that.
//
// Every write is recorded in Actions ("create Pod ns/name"), and Fail, when
// set, can fail any call, so a test injects the server errors it needs.
package fakeclient
