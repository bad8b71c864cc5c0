// Package nodeip chooses the address a node advertises as its InternalIP when
// none is configured, as the kubelet does without --node-ip: the IPv4 address
// of the interface that holds the host's default route (its preferred source
// when the route names one, else the interface's first global address).
// Without a default route it falls back to the first global IPv4 address of
// an up, non-loopback interface that is not one of Converge's own (pod
// bridges cnv-*, the service proxy's converge0).
//
// Pods in their own network namespace (the containerd runtime) reach the
// node at that address; 127.0.0.1 would be their own loopback.
package nodeip
