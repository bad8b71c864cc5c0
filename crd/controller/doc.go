// Package controller runs the CRD lifecycle: it watches CustomResourceDefinitions
// in storage, checks their names, installs one registry entry per served version,
// reports NamesAccepted/Established (and Terminating) through the API's /status
// endpoint, and on deletion removes the custom resources, the registry entries and
// the cleanup finalizer.
package controller
