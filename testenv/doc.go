// Package testenv runs the real Converge control plane in-process for tests: an
// embedded etcd in a temporary directory without fsync, the API server on a free
// loopback port, and a kubeconfig pointing at it. Start+Stop takes well under a
// second, and environments are independent, so tests may run them in parallel.
//
// With Ginkgo, start one environment in BeforeSuite and stop it in AfterSuite; with
// plain testing, StartT stops it through t.Cleanup.
package testenv
