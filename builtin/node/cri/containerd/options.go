package containerd

import (
	"errors"
	"runtime"

	"github.com/converge-dev/converge/builtin/node/image"
)

// Defaults used when an Options field is zero.
const (
	DefaultNamespace   = image.DefaultNamespace
	DefaultSnapshotter = "overlayfs"
	// FallbackSnapshotter is used when overlayfs is not available.
	FallbackSnapshotter = "native"
	DefaultRuntime      = "io.containerd.runc.v2"
)

// Options configure New. The zero value of every field but Address means its default.
type Options struct {
	// Address is containerd's gRPC socket. Required.
	Address string
	// Namespace is the containerd namespace holding images and containers
	// (default "converge").
	Namespace string
	// Snapshotter unpacks images (default overlayfs, falling back to native when
	// the daemon's overlayfs plugin failed to load). An explicit value is used as is.
	Snapshotter string
	// Runtime is the containerd runtime (shim) name (default io.containerd.runc.v2).
	Runtime string
	// Registries configure mirrors, logins and TLS for image pulls and pushes
	// (LoadRegistries reads k3s's registries.yaml shape). The zero value
	// reaches every registry directly over HTTPS, loopback ones over HTTP.
	Registries Registries
	// ShimGroups is how many runc shims the pods share (spread over them by
	// pod UID; a pod's containers share one), default DefaultShimGroups: a
	// start then runs the shim's short-lived start command only, not a new
	// shim daemon. Negative starts a shim per container.
	ShimGroups int
}

func (o *Options) complete() {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Runtime == "" {
		o.Runtime = DefaultRuntime
	}
	if o.ShimGroups == 0 {
		o.ShimGroups = DefaultShimGroups()
	}
}

// DefaultShimGroups is two shims per CPU, at least 4. A shim creates its
// tasks one at a time, so the groups bound how many containers are created
// at once: enough to keep the CPUs busy during a burst of starts (50 pods on
// 2 cores: CPU per start 96 ms with a shim per container, 78 ms with 4
// groups, and no slower; docs/PERFORMANCE.md).
func DefaultShimGroups() int { return max(4, 2*runtime.NumCPU()) }

func (o *Options) validate() error {
	var errs []error
	if o.Address == "" {
		errs = append(errs, errors.New("containerd runtime: Address is required"))
	}

	return errors.Join(errs...)
}
