package node

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/nodeip"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
)

// Options configure an Agent. The zero value of every field means its default,
// except that RootDir, Runtime and Config (or Client) are required.
type Options struct {
	// NodeName is the Node's name (default: the host name).
	NodeName string
	// Config reaches the API server; Client, when set, is used instead (its
	// Scheme must know core/v1 and coordination/v1).
	Config *client.Config
	Client *client.Client
	// Runtime runs the containers.
	Runtime cri.Runtime
	// RootDir holds pod directories (volumes) and container logs.
	RootDir string
	// PodCIDR is the range pod IPs come from when the Node has no
	// spec.podCIDR yet (default DefaultLoopbackPodCIDR, or DefaultCNIPodCIDR
	// with PodNetworkCNI).
	PodCIDR string
	// PodNetwork is PodNetworkLoopback (default with the process runtime) or
	// PodNetworkCNI (default with the containerd runtime).
	PodNetwork string
	// CNIBinDirs are searched for CNI plugins (default /usr/lib/cni, then
	// /opt/cni/bin); CNIConfDir receives the node's conflist (default
	// RootDir/cni/net.d). Used with PodNetworkCNI.
	CNIBinDirs []string
	CNIConfDir string
	// InternalIP is the node's address, reported in its status, given to
	// hostNetwork pods and used for hostPort mappings (the kubelet's
	// --node-ip). Default with PodNetworkCNI: the address of the host's
	// default-route interface, which pods in their own network namespace
	// reach (package nodeip); else 127.0.0.1.
	InternalIP string
	// LogAddress is the log server's listen address (default InternalIP:0).
	LogAddress string
	// LogTLS, when set, makes the log server serve HTTPS with it (in secure
	// mode: client certificates of the cluster CA or bearer tokens, every
	// request authorized as the kubelet authorizes them, see package
	// nodeauth and pki.NodeLogServerTLS); nil serves plain HTTP.
	LogTLS *tls.Config
	// Metrics is the registry served at /metrics on the log server's port
	// (the kubelet_* metrics of package kubeletmetrics are registered on
	// it); nil: a new registry of the agent's own.
	Metrics *prometheus.Registry
	// Labels are added to the Node's labels.
	Labels map[string]string
	// Zone sets topology.kubernetes.io/zone.
	Zone string
	// Capacity overrides capacity and allocatable entries (e.g. for tests).
	Capacity corev1.ResourceList
	// LeaseDuration (40 s) and LeaseRenewInterval (10 s) of the node Lease.
	LeaseDuration, LeaseRenewInterval time.Duration
	// NodeStatusUpdateInterval (10 s) is how often conditions are computed;
	// NodeStatusReportInterval (5 min) how often status is written without change.
	NodeStatusUpdateInterval, NodeStatusReportInterval time.Duration
	// CrashLoopBackOffBase (10 s) doubles up to CrashLoopBackOffMax (5 min);
	// a container that ran BackOffResetAfter (10 min) starts over.
	CrashLoopBackOffBase, CrashLoopBackOffMax, BackOffResetAfter time.Duration
	// ImagePullBackOffBase (10 s) doubles up to ImagePullBackOffMax (5 min)
	// between failed pulls of a container's image (ErrImagePull, then
	// ImagePullBackOff).
	ImagePullBackOffBase, ImagePullBackOffMax time.Duration
	// ImageGCHighThresholdPercent (nil: 85) is the image filesystem usage
	// above which unused images are removed, least recently used first,
	// until usage is below ImageGCLowThresholdPercent (nil: 80); 0 and 0
	// remove every unused image at each pass. Only runtimes implementing
	// cri.ImageService and cri.ImageFS (containerd) have their images
	// collected, every ImageGCInterval (default 5 min).
	ImageGCHighThresholdPercent, ImageGCLowThresholdPercent *int
	ImageGCInterval                                         time.Duration
	// MaxLogBytes rotates a container log above this size (default 10 MiB).
	MaxLogBytes int64
	// VolumeResyncInterval is how often a pod's configMap, secret,
	// downwardAPI and projected volumes are projected again, so changes reach
	// the files (default 10 s; the kubelet's pod sync is about a minute).
	VolumeResyncInterval time.Duration
	// StatsInterval is how often resource usage is read for /stats/summary
	// and /metrics/resource (default 10 s).
	StatsInterval time.Duration
	// ClusterDNS are the cluster DNS server addresses pods with dnsPolicy
	// ClusterFirst get as nameservers (the kubelet's --cluster-dns; the
	// composition root passes servicenet.ClusterDNSIP of the service CIDR).
	// Empty: such pods fall back to the host's configuration, with a
	// MissingClusterDNS event.
	ClusterDNS []string
	// ClusterDomain is the cluster's DNS domain (default cluster.local).
	ClusterDomain string
	// ResolvConf is the host's resolver configuration pods with dnsPolicy
	// Default get, whose search paths ClusterFirst pods get too (the
	// kubelet's --resolv-conf; default /etc/resolv.conf, or
	// /run/systemd/resolve/resolv.conf when the former only names the
	// systemd-resolved stub).
	ResolvConf string
	// Version is reported as nodeInfo.kubeletVersion (default v1.32.0).
	Version string
	// Logger receives the agent's logs.
	Logger logr.Logger
}

func (o *Options) complete() error {
	var errs []error
	if o.NodeName == "" {
		h, err := os.Hostname()
		if err != nil {
			errs = append(errs, fmt.Errorf("node: NodeName is empty and the host name is unknown: %w", err))
		}
		o.NodeName = h
	}
	if o.Config == nil && o.Client == nil {
		errs = append(errs, errors.New("node: Config or Client is required"))
	}
	if o.Runtime == nil {
		errs = append(errs, errors.New("node: Runtime is required"))
	}
	if o.RootDir == "" {
		errs = append(errs, errors.New("node: RootDir is required"))
	}
	if o.PodNetwork == "" {
		o.PodNetwork = PodNetworkLoopback
		if o.Runtime != nil && o.Runtime.Name() == "containerd" {
			o.PodNetwork = PodNetworkCNI
		}
	}
	switch {
	case o.PodNetwork != PodNetworkLoopback && o.PodNetwork != PodNetworkCNI:
		errs = append(errs, fmt.Errorf("node: PodNetwork %q: use %s or %s", o.PodNetwork, PodNetworkLoopback, PodNetworkCNI))
	case o.PodNetwork == PodNetworkCNI && o.Runtime != nil && o.Runtime.Name() != "containerd":
		errs = append(errs, fmt.Errorf("node: PodNetwork %s needs the containerd runtime (the %s runtime runs containers in the host's network)", PodNetworkCNI, o.Runtime.Name()))
	}
	if o.PodCIDR == "" {
		o.PodCIDR = DefaultLoopbackPodCIDR
		if o.PodNetwork == PodNetworkCNI {
			o.PodCIDR = DefaultCNIPodCIDR
		}
	}
	if _, _, err := net.ParseCIDR(o.PodCIDR); err != nil {
		errs = append(errs, fmt.Errorf("node: PodCIDR: %w", err))
	}
	if ip, err := nodeip.ForNode(o.InternalIP, o.PodNetwork == PodNetworkCNI); ip == "" {
		errs = append(errs, fmt.Errorf("node: InternalIP: %w", err))
	} else {
		if err != nil {
			o.Logger.Error(err, "Cannot find the host's address")
		}
		o.InternalIP = ip
	}
	if o.LogAddress == "" {
		o.LogAddress = net.JoinHostPort(o.InternalIP, "0")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.LeaseDuration, 40*time.Second)
	def(&o.LeaseRenewInterval, 10*time.Second)
	def(&o.NodeStatusUpdateInterval, 10*time.Second)
	def(&o.NodeStatusReportInterval, 5*time.Minute)
	def(&o.CrashLoopBackOffBase, 10*time.Second)
	def(&o.CrashLoopBackOffMax, 5*time.Minute)
	def(&o.BackOffResetAfter, 10*time.Minute)
	def(&o.ImagePullBackOffBase, 10*time.Second)
	def(&o.ImagePullBackOffMax, 5*time.Minute)
	def(&o.ImageGCInterval, 5*time.Minute)
	def(&o.VolumeResyncInterval, 10*time.Second)
	if o.ImageGCHighThresholdPercent == nil {
		o.ImageGCHighThresholdPercent = api.Ptr(85)
	}
	if o.ImageGCLowThresholdPercent == nil {
		o.ImageGCLowThresholdPercent = api.Ptr(80)
	}
	if h, l := *o.ImageGCHighThresholdPercent, *o.ImageGCLowThresholdPercent; h < 0 || h > 100 || l < 0 || l > h {
		errs = append(errs, fmt.Errorf("node: image GC thresholds must satisfy 0 <= low (%d) <= high (%d) <= 100", l, h))
	}
	if o.MaxLogBytes <= 0 {
		o.MaxLogBytes = 10 << 20
	}
	if o.ClusterDomain == "" {
		o.ClusterDomain = "cluster.local"
	}
	for _, ip := range o.ClusterDNS {
		if net.ParseIP(ip) == nil {
			errs = append(errs, fmt.Errorf("node: ClusterDNS %q is not an IP", ip))
		}
	}
	if o.ResolvConf == "" {
		o.ResolvConf = hostResolvConf("/etc/resolv.conf", "/run/systemd/resolve/resolv.conf")
	}
	if o.Version == "" {
		o.Version = "v1.32.0"
	}
	return errors.Join(errs...)
}
