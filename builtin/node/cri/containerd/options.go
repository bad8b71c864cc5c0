package containerd

import (
	"errors"

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
}

func (o *Options) complete() {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Runtime == "" {
		o.Runtime = DefaultRuntime
	}
}

func (o *Options) validate() error {
	var errs []error
	if o.Address == "" {
		errs = append(errs, errors.New("containerd runtime: Address is required"))
	}
	return errors.Join(errs...)
}
