package testenv

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Options configure an environment. The zero value is a good default. Each
// environment's Services take cluster IPs from a /20 of 127.96.0.0/12 chosen
// by its directory (random for a temporary one; kept across a restart on the
// same Dir).
type Options struct {
	// Logger receives the control plane's logs (discarded by default).
	Logger logr.Logger
	// KubernetesVersion reported by /version (default v1.32.0).
	KubernetesVersion string
	// Controllers selects built-in controllers to run (names from
	// builtin/controllers, e.g. "garbagecollector", "namespace"; "*" for all).
	// None run by default.
	Controllers []string
	// Scheduler runs the scheduler in the environment.
	Scheduler bool
	// LocalNode runs a node agent on the process runtime and the service proxy
	// (pods really run as host processes).
	LocalNode bool
	// SimulatedNodes runs that many simulated nodes.
	SimulatedNodes int
	// PodCIDR is the range of the local node's pod IPs. By default each
	// environment picks its own /16 in 127.16.0.0–127.95.255.255 at random, so
	// that environments in parallel test binaries rarely hand out the same pod
	// IPs (pods of the process runtime bind them on this machine).
	PodCIDR string
	// Dir is where data and the kubeconfig go; a new temporary directory by default,
	// removed by Stop.
	Dir string
}

// Environment is a running in-process control plane.
type Environment struct {
	// URL is the API server's base URL (http://127.0.0.1:PORT).
	URL string
	// Kubeconfig is the path of a kubeconfig for URL.
	Kubeconfig string
	// Dir holds the environment's files.
	Dir string
	// ServiceCIDR is the range of the Services' cluster IPs.
	ServiceCIDR string
	// ControlPlane gives access to the running parts.
	ControlPlane *controlplane.ControlPlane

	ownDir bool
}

// Start runs a control plane and returns once it serves.
func Start(ctx context.Context, opts Options) (*Environment, error) {
	env := &Environment{Dir: opts.Dir}
	if env.Dir == "" {
		d, err := os.MkdirTemp("", "converge-testenv-")
		if err != nil {
			return nil, fmt.Errorf("testenv: create temp dir: %w", err)
		}
		env.Dir, env.ownDir = d, true
	}
	env.ServiceCIDR = serviceCIDRFor(env.Dir)
	cp, err := controlplane.Start(ctx, controlplane.Options{
		DataDir: env.Dir, NoFsync: true, Port: 0, Logger: opts.Logger,
		KubernetesVersion: opts.KubernetesVersion, CompactionInterval: -1, Controllers: opts.Controllers, Scheduler: opts.Scheduler,
		LocalNode: opts.LocalNode, SimulatedNodes: opts.SimulatedNodes, PodCIDR: podCIDR(opts.PodCIDR),
		ServiceCIDR: env.ServiceCIDR,
	})
	if err != nil {
		env.cleanup()
		return nil, fmt.Errorf("testenv: %w", err)
	}
	env.ControlPlane, env.URL = cp, cp.URL()
	env.Kubeconfig = filepath.Join(env.Dir, "kubeconfig")
	if err := cp.WriteKubeconfig(env.Kubeconfig); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("testenv: %w", err)
	}
	return env, nil
}

// podCIDR returns cidr, or a random loopback /16 outside the ranges the
// control plane uses by default (127.10.0.0/16 for pods, 127.96.0.0/12 for
// Services).
func podCIDR(cidr string) string {
	if cidr != "" {
		return cidr
	}
	return fmt.Sprintf("127.%d.0.0/16", 16+rand.IntN(80))
}

// ServiceCIDR returns a random /20 of the default service CIDR
// (127.96.0.0/12). Each environment takes its own: the service proxies of
// environments in parallel test binaries listen on their Services' cluster
// IPs on this machine, and every environment has the kubernetes Service at the
// first address of its range.
func ServiceCIDR() string { return serviceCIDRAt(rand.IntN(256)) }

// serviceCIDRFor is the /20 of an environment's data directory: a restart on
// the same directory keeps its Services' range.
func serviceCIDRFor(dir string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(dir))
	return serviceCIDRAt(int(h.Sum32() % 256))
}

// serviceCIDRAt is the i-th /20 (0 <= i < 256) of 127.96.0.0/12.
func serviceCIDRAt(i int) string { return fmt.Sprintf("127.%d.%d.0/20", 96+i/16, 16*(i%16)) }

// StartT starts an environment for t and stops it when the test ends.
func StartT(t testing.TB, opts Options) *Environment {
	t.Helper()
	env, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("start test environment: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop test environment: %v", err)
		}
	})
	return env
}

// Stop shuts the control plane down and removes the temporary directory.
func (e *Environment) Stop() error {
	var err error
	if e.ControlPlane != nil {
		err = e.ControlPlane.Close()
	}
	e.cleanup()
	return err
}

// AddSubresource serves sub as subresource name of resource gvr of the
// running API server, as the control plane wires the subresources that need
// more than storage (pods/log, pods/proxy).
func (e *Environment) AddSubresource(gvr api.GroupVersionResource, name string, sub registry.Subresource) {
	reg := e.ControlPlane.Registry()
	res := *reg.Get(gvr)
	res.Subresources = maps.Clone(res.Subresources)
	if res.Subresources == nil {
		res.Subresources = map[string]registry.Subresource{}
	}
	res.Subresources[name] = sub
	reg.Add(&res)
}

func (e *Environment) cleanup() {
	if e.ownDir {
		_ = os.RemoveAll(e.Dir)
	}
}
