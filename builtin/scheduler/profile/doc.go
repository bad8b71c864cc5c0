// Package profile runs one scheduling profile: it instantiates the profile's
// plugins from a plugin.Registry and calls them at each extension point in
// the configured order. Filter and Score run in parallel over nodes through a
// plugin.Parallelizer. A Framework is also the plugin.Handle its plugins
// receive.
//
// Extension-point semantics follow kube-scheduler: PreFilter results are
// intersected and a Skip skips the plugin's Filter; Filter stops at the first
// rejection per node; PostFilter stops at the first success; Score results are
// normalised, checked to be in [0, 100] and weighted; Reserve failures call
// Unreserve of every plugin in reverse order; Permit may hold a pod (Wait)
// until every waiting plugin allows it or the timeout passes; Bind stops at
// the first plugin that does not Skip.
package profile
