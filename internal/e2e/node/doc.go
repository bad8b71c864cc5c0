// Package node is the end-to-end acceptance of the node agent on the process
// runtime: a real control plane (testenv with the local node, all controllers
// and the scheduler) runs a Deployment of a small HTTP server built by the
// test, and the specs check what a user would see — pods Ready through a
// readiness probe, a Service's ClusterIP reaching every replica through the
// service proxy, restarts after a killed process, CrashLoopBackOff with
// growing back-off, `kubectl logs -f` streaming, and the agent re-adopting
// running containers after it was killed.
package node
