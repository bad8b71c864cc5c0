// Package secure measures and checks the default, secure Converge API server
// (HTTPS, client certificates, RBAC, admission) with client-go's own
// transport, as users reach it: that client-go negotiates HTTP/2 with it, and
// ConfigMap creates at concurrency 64 through a typed clientset against the
// secure server, an insecure one and raw etcd puts, in alternating slices:
//
//	go test -run '^$' -bench SecureCreateClientGo -benchtime 20000x -count 2 ./secure/
//
// BenchmarkSecureCreateHTTP2Servers compares, in the same way, the secure
// server with our HTTP/2 server (the default) and with Go's.
package secure
