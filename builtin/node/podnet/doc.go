// Package podnet gives each pod of a node its own network namespace, set up
// through CNI with the standard plugins (Debian's containernetworking-plugins,
// in /usr/lib/cni or /opt/cni/bin): bridge for eth0 (a veth pair into a
// per-node Linux bridge that is the pods' default gateway), host-local IPAM over the node's
// pod CIDR, portmap for hostPort, and firewall, which accepts the pods'
// traffic in iptables' FORWARD chain (its policy may be DROP). lo is brought
// up when the namespace is created (no loopback plugin run per pod), and one
// nat rule set per node masquerades what pods send outside the pod CIDR (no
// per-pod ipMasq rules): chains that touch no iptables run in parallel.
//
// New writes the network configuration list (conflist) under the node's root
// dir and enables IPv4 forwarding (net.ipv4.ip_forward), so pods reach
// addresses of the host (the service proxy's cluster IPs) and pods of other
// bridges on the same machine. The bridge is named after the node ("cnv-" and
// a hash of the node name), so two nodes on one machine get two bridges; the
// host routes between their pod CIDRs.
//
// Setup creates the pod's namespace as a bind mount under RootDir/netns/<pod
// UID>, runs CNI ADD and records the result (IP, port mappings) in
// RootDir/podnet/<pod UID>.json. A pod without hostPorts on a host whose
// FORWARD chain accepts (no portmap, no firewall to run) is set up without
// plugins: the agent does what bridge and host-local would — the bridge
// with the gateway address, a veth pair (host side "veth" and a hash of the
// pod UID) as a hairpin port of it, eth0 with an IP from host-local's
// allocation files (same directory, format and file lock, so both kinds of
// pods share one address space) and a default route through the gateway —
// and records the veth, which Teardown then removes with the allocation
// instead of running CNI DEL: two plugin processes less per pod start. It is idempotent: a pod whose namespace and
// record exist gets them back without calling CNI, which is how a restarted
// agent finds the IP of a pod it set up before. An interrupted setup is
// undone (CNI DEL) and redone. Teardown runs CNI DEL, unmounts and removes the
// namespace and the record; it is idempotent too. List returns the pod UIDs
// that have a namespace, so the agent can tear down those of pods that went
// away while it was not running.
//
// New also prepares the node's bridge: one left by an earlier node of the
// same name with another address (another pod CIDR) would fail every CNI ADD,
// so it is deleted when no interface is attached to it (one in use is logged
// and left); and it turns on net.bridge.bridge-nf-call-iptables where
// br_netfilter is loaded, so a pod reaching a hostPort of a pod on the same
// bridge gets the answer un-NATed. RemoveBridge and RemoveMasquerade remove
// what a node that goes for good leaves.
//
// A plugin binary that is missing from every plugin directory fails Setup
// with an error wrapping ErrPluginMissing that names the plugin and the
// package to install; nothing is created.
//
// Setup and Teardown are serialised (one CNI operation at a time per
// Network). A Network is safe for concurrent use.
package podnet
