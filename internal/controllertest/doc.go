// Package controllertest is what the behaviour suites of the built-in
// controllers share: an in-process control plane with a client (Start, from
// BeforeSuite), a manager a suite runs itself when it passes options or
// restarts the controller (StartManager), fresh namespaces, and the readers
// specs use to look at what a controller did (events, pods, a pod's state set
// the way a node agent would).
//
// Its helpers assert with Gomega: they are for Ginkgo specs, and fail the
// spec (or the suite, from BeforeSuite) when the control plane does.
package controllertest
