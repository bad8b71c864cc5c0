// Package peer measures the default Converge control plane against the real
// peer, kube-apiserver v1.34 built from k8s.io/kubernetes (bench/envtestbin,
// `make peer-bin`), each on its own embedded etcd with Converge's settings,
// with TLS, client-certificate authentication and RBAC, reached by client-go
// from a kubeconfig under the same load in one run (see BenchmarkKubeAPIServer):
//
//	make peer-bin
//	cd bench && go test -run '^$' -bench KubeAPIServer -benchtime 1x -timeout 30m ./peer/
package peer
