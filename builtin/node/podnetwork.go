package node

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/kubeletmetrics"
	"github.com/converge-dev/converge/builtin/node/podnet"
)

// Pod networks (Options.PodNetwork).
const (
	// PodNetworkLoopback gives each pod a loopback IP on the host network
	// (the process runtime's default).
	PodNetworkLoopback = "loopback"
	// PodNetworkCNI gives each pod its own network namespace through CNI
	// (package podnet; the containerd runtime's default).
	PodNetworkCNI = "cni"
)

// Default pod CIDRs by pod network.
const (
	DefaultLoopbackPodCIDR = "127.10.0.0/16"
	// DefaultCNIPodCIDR is the first /24 of k3s' cluster CIDR 10.42.0.0/16
	// (one /24 per node).
	DefaultCNIPodCIDR = "10.42.0.0/24"
)

// podCIDRFor returns the pod CIDR to use: the Node's spec.podCIDR when set,
// else Options.PodCIDR. A loopback spec.podCIDR (recorded by an agent of the
// process runtime; it cannot change) is unusable for CNI: Options.PodCIDR is
// used then, with a warning.
func (a *Agent) podCIDRFor(nodeCIDR string) string {
	if nodeCIDR == "" {
		return a.opts.PodCIDR
	}
	if p, err := netip.ParsePrefix(nodeCIDR); a.opts.PodNetwork == PodNetworkCNI && (err != nil || p.Addr().IsLoopback()) {
		a.log.Info("The Node's spec.podCIDR cannot be used for pod network namespaces; using the configured pod CIDR (delete the Node to record it)",
			"nodePodCIDR", nodeCIDR, "podCIDR", a.opts.PodCIDR)
		return a.opts.PodCIDR
	}
	return nodeCIDR
}

// startPodNetwork creates the CNI pod network over podCIDR (the Node's
// spec.podCIDR when it has one).
func (a *Agent) startPodNetwork(podCIDR string) error {
	if a.opts.PodNetwork != PodNetworkCNI {
		return nil
	}
	n, err := podnet.New(podnet.Options{NodeName: a.opts.NodeName, RootDir: a.opts.RootDir, ConfDir: a.opts.CNIConfDir,
		PodCIDR: podCIDR, BinDirs: a.opts.CNIBinDirs, Logger: a.log.WithName("podnet")})
	if err != nil {
		return fmt.Errorf("node: pod network: %w", err)
	}
	if err := n.CheckPlugins(); err != nil {
		a.log.Error(err, "Pods will not start until the CNI plugins are installed")
	}
	a.podnet = n
	a.log.Info("Pod network ready", "podCIDR", podCIDR, "bridge", n.Bridge())
	return nil
}

// setupNetwork gives the pod its IP: the node's for hostNetwork pods, a
// loopback IP, or a CNI network namespace. CNI failures are reported on the
// pod (message and a FailedCreatePodSandBox event) and retried with back-off
// until ctx ends.
func (w *podWorker) setupNetwork(ctx context.Context, pod *corev1.Pod) (ip, netns string, ok bool) {
	if pod.Spec.HostNetwork {
		return w.a.opts.InternalIP, "", true
	}
	if w.a.podnet == nil {
		ip, err := w.a.ipam.allocate(w.uid)
		if err != nil {
			w.setMessage(fmt.Sprintf("cannot allocate a pod IP: %v", err))
			return "", "", false
		}
		return ip, "", true
	}
	backoff := time.Second
	for {
		sb, err := w.a.podnet.Setup(ctx, podnet.Pod{UID: pod.UID, Namespace: pod.Namespace, Name: pod.Name, Ports: hostPorts(pod)})
		if err == nil {
			if err := w.writeHosts(pod, sb.IP); err != nil {
				w.log.Error(err, "Cannot write the pod's hosts file")
			}
			return sb.IP, sb.NetNSPath, true
		}
		if ctx.Err() != nil {
			return "", "", false
		}
		msg := "Failed to create pod sandbox: " + err.Error()
		w.setMessage(msg)
		w.a.rec.Event(ctx, w.current(), "Warning", "FailedCreatePodSandBox", msg)
		select {
		case <-ctx.Done():
			return "", "", false
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// startNetwork starts giving the pod its IP (setupNetwork). A CNI network is
// set up in the background (done is closed when that ends): its namespace
// path is known at once, so containers are prepared meanwhile and only their
// start waits for it (ContainerSpec.Finish, finishSpec). Other networks are
// set up before it returns; ok is false when ctx ended first.
func (w *podWorker) startNetwork(ctx context.Context, pod *corev1.Pod) (done <-chan struct{}, ok bool) {
	ch := make(chan struct{})
	if pod.Spec.HostNetwork || w.a.podnet == nil {
		defer close(ch)
		ip, netns, ok := w.setupNetwork(ctx, pod)
		if !ok {
			return ch, false
		}
		w.mu.Lock()
		w.podIP, w.netns = ip, netns
		w.mu.Unlock()
		w.sandboxPartDone()
		return ch, true
	}
	w.mu.Lock()
	w.netns = w.a.podnet.NetNSPath(w.uid)
	w.mu.Unlock()
	go func() {
		defer close(ch)
		ip, netns, ok := w.setupNetwork(ctx, pod)
		if !ok {
			return
		}
		w.mu.Lock()
		w.podIP, w.netns = ip, netns
		w.mu.Unlock()
		w.sandboxPartDone()
	}()
	return ch, true
}

// sandboxPartDone marks one part of the sandbox ready (startNetwork,
// lifecycle's volumes and DNS); after the last, the pod's sandbox is.
func (w *podWorker) sandboxPartDone() {
	w.mu.Lock()
	w.sandboxParts--
	last := w.sandboxParts == 0
	cleared := false
	if last {
		cleared = w.message != ""
		w.sandboxOK, w.message = true, ""
		close(w.sandboxReady)
	}
	w.mu.Unlock()
	if last {
		w.a.metrics.PodWorker(kubeletmetrics.WorkerCreate, w.sandboxStart)
		// The pod IP and PodReadyToStartContainers go out with the next
		// change (the container running, or why it waits), as on the
		// kubelet, whose status after the sandbox is the one after its
		// first sync: not a write of their own (in a burst of starts, one
		// status patch of four). A sandbox error's message is cleared now.
		if cleared {
			w.markDirty()
		}
	}
}

// sandboxPending reports whether the pod's sandbox is still being set up.
func (w *podWorker) sandboxPending() bool {
	select {
	case <-w.sandboxReady:
		return false
	default:
		return true
	}
}

// waitSandbox waits until the pod's sandbox is ready or ctx ends.
func (w *podWorker) waitSandbox(ctx context.Context) error {
	select {
	case <-w.sandboxReady:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the pod's network: %w", ctx.Err())
	}
}

// finishSpec is the ContainerSpec.Finish of a container whose spec was made
// while the pod's network was set up: it waits for the sandbox, then sets
// the pod IP (in POD_IP too when the agent added that variable,
// implicitPodIP), the namespace and the /etc/hosts mount.
func (w *podWorker) finishSpec(implicitPodIP bool) func(context.Context, *cri.ContainerSpec) error {
	return func(ctx context.Context, spec *cri.ContainerSpec) error {
		if err := w.waitSandbox(ctx); err != nil {
			return err
		}
		spec.PodIP = w.ip()
		if i := slices.IndexFunc(spec.Env, func(e string) bool { return strings.HasPrefix(e, "POD_IP=") }); implicitPodIP && i >= 0 {
			spec.Env = slices.Clone(spec.Env)
			spec.Env[i] = "POD_IP=" + spec.PodIP
		}
		w.sandboxMounts(spec)
		return nil
	}
}

// needsPodIP reports whether the container's spec may depend on the pod IP
// other than through the POD_IP variable the agent adds (finishSpec): an
// env var from status.podIP(s), a $(POD_IP) reference, a subPathExpr
// (expanded against the environment). Its spec is made once the network is
// set up.
func needsPodIP(c corev1.Container) bool {
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && strings.HasPrefix(e.ValueFrom.FieldRef.FieldPath, "status.podIP") {
			return true
		}
		if strings.Contains(e.Value, "$(POD_IP)") {
			return true
		}
	}
	if slices.ContainsFunc(slices.Concat(c.Command, c.Args), func(s string) bool { return strings.Contains(s, "$(POD_IP)") }) {
		return true
	}
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.SubPathExpr != "" })
}

// releaseNetwork gives back the pod's IP; with CNI it tears the namespace
// down (final: on pod removal).
func (w *podWorker) releaseNetwork(ctx context.Context) {
	w.a.ipam.release(w.uid)
	if w.a.podnet == nil {
		return
	}
	// Finished even when the agent stops meanwhile: a namespace left behind
	// would only go when the agent next starts.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := w.a.podnet.Teardown(ctx, w.uid); err != nil {
		w.log.Error(err, "Tearing down the pod network failed")
	}
}

// hostPorts are the pod's hostPort mappings for portmap.
func hostPorts(pod *corev1.Pod) []podnet.PortMapping {
	var out []podnet.PortMapping
	for _, c := range pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.HostPort == 0 {
				continue
			}
			proto := strings.ToLower(string(p.Protocol))
			if proto == "" {
				proto = "tcp"
			}
			out = append(out, podnet.PortMapping{HostPort: p.HostPort, ContainerPort: p.ContainerPort, Protocol: proto, HostIP: p.HostIP})
		}
	}
	return out
}

// hostsPath is the pod's managed /etc/hosts.
func (w *podWorker) hostsPath() string { return filepath.Join(w.dir, "etc-hosts") }

// writeHosts writes the pod's /etc/hosts as the kubelet manages it.
func (w *podWorker) writeHosts(pod *corev1.Pod, ip string) error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("write hosts file: %w", err)
	}
	if err := os.WriteFile(w.hostsPath(), hostsFile(pod, ip, w.a.opts.ClusterDomain), 0o644); err != nil {
		return fmt.Errorf("write hosts file: %w", err)
	}
	return nil
}

// hostsFile is the content of a pod's managed /etc/hosts, as the kubelet
// writes it: localhost, the pod's IP with its host name — after its fully
// qualified name <hostname>.<subdomain>.<ns>.svc.<domain> when the pod has a
// subdomain (the DNS specs' getent finds both there, Service or not) —,
// then spec.hostAliases.
func hostsFile(pod *corev1.Pod, ip, clusterDomain string) []byte {
	var b strings.Builder
	b.WriteString("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	host, domain := podHostname(pod, clusterDomain)
	if domain != "" {
		fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, host, domain, host)
	} else {
		fmt.Fprintf(&b, "%s\t%s\n", ip, host)
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
	}
	for _, h := range pod.Spec.HostAliases {
		fmt.Fprintf(&b, "%s\t%s\n", h.IP, strings.Join(h.Hostnames, "\t"))
	}
	return []byte(b.String())
}

// hostname is the host name of the pod's containers: podHostname's, or with
// spec.setHostnameAsFQDN and a subdomain its fully qualified name. A
// hostNetwork pod keeps its name (the kubelet would give it the node's host
// name, which containers of the host's UTS namespace see).
func (w *podWorker) hostname(pod *corev1.Pod) string {
	if pod.Spec.HostNetwork {
		return cri.TruncateHostname(pod.Name)
	}
	host, domain := podHostname(pod, w.a.opts.ClusterDomain)
	if domain != "" && pod.Spec.SetHostnameAsFQDN != nil && *pod.Spec.SetHostnameAsFQDN {
		return host + "." + domain
	}
	return host
}

// podHostname is the pod's host name and DNS domain as the kubelet gives
// them: spec.hostname, else the pod's name, cut to 63 bytes (without a
// trailing '-' or '.'); with spec.subdomain the domain
// <subdomain>.<namespace>.svc.<clusterDomain>, else none.
func podHostname(pod *corev1.Pod, clusterDomain string) (host, domain string) {
	host = pod.Name
	if pod.Spec.Hostname != "" {
		host = pod.Spec.Hostname
	}
	host = cri.TruncateHostname(host)
	if pod.Spec.Subdomain != "" && clusterDomain != "" {
		domain = pod.Spec.Subdomain + "." + pod.Namespace + ".svc." + clusterDomain
	}
	return host, domain
}

// sandboxMounts adds the pod's hosts file to a container in the pod's own
// network namespace, unless the container mounts something at /etc/hosts
// itself (the kubelet then leaves it unmanaged too).
func (w *podWorker) sandboxMounts(spec *cri.ContainerSpec) {
	w.mu.Lock()
	spec.NetNSPath = w.netns
	w.mu.Unlock()
	if spec.NetNSPath == "" {
		return
	}
	if slices.ContainsFunc(spec.Mounts, func(m cri.Mount) bool { return filepath.Clean(m.ContainerPath) == "/etc/hosts" }) {
		return
	}
	if _, err := os.Stat(w.hostsPath()); err == nil {
		spec.Mounts = append(spec.Mounts, cri.Mount{HostPath: w.hostsPath(), ContainerPath: "/etc/hosts", ReadOnly: true})
	}
}

// removeOrphanNetworks tears down the pod networks of pods that are gone and
// have no worker (they went away while the agent was not running).
func (a *Agent) removeOrphanNetworks(ctx context.Context, pods []*corev1.Pod) {
	if a.podnet == nil {
		return
	}
	uids, err := a.podnet.List()
	if err != nil {
		a.log.Error(err, "Listing pod networks failed")
		return
	}
	live := map[string]bool{}
	for _, p := range pods {
		live[p.UID] = true
	}
	for _, uid := range uids {
		a.mu.Lock()
		_, working := a.workers[uid]
		a.mu.Unlock()
		if live[uid] || working {
			continue
		}
		a.log.Info("Tearing down the network of a pod that is gone", "uid", uid)
		if err := a.podnet.Teardown(ctx, uid); err != nil {
			a.log.Error(err, "Tearing down an orphaned pod network failed", "uid", uid)
		}
	}
}
