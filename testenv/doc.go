// Package testenv runs the real Converge control plane in-process for tests: an
// embedded etcd in a temporary directory without fsync, the API server on a free
// loopback port, and a kubeconfig pointing at it. Start+Stop takes well under a
// second, and environments are independent, so tests may run them in parallel.
//
// Unlike `converge up`, an environment is insecure: plain HTTP, no
// authentication or authorization (every client has full rights), and hence no
// ServiceAccount admission plugin or root CA publisher, because it is a test
// harness on loopback and most tests run no controllers. Tests of the secure
// mode start controlplane.Start with Options.Secure instead.
//
// With Ginkgo, start one environment in BeforeSuite and stop it in AfterSuite; with
// plain testing, StartT stops it through t.Cleanup.
package testenv
