package controlplane

import (
	"context"
	"fmt"
	"os"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/cri/containerd"
)

// ImageStoreOptions configure OpenImageStore.
type ImageStoreOptions struct {
	// Address is containerd's socket. Required.
	Address string
	// Namespace holds the images (default "converge", the containerd runtime's).
	Namespace string
	// RegistriesFile configures pulls and pushes (k3s registries.yaml shape).
	RegistriesFile string
}

// ImageStore is the containerd runtime's image side, for `converge image`.
type ImageStore interface {
	cri.ImageService
	// Push sends the local image src to a registry as dst (src's own name
	// when dst is empty).
	Push(ctx context.Context, src, dst string, creds []cri.Credential) (cri.Image, error)
	Close() error
}

// OpenImageStore connects to containerd the way the containerd runtime does.
func OpenImageStore(ctx context.Context, o ImageStoreOptions) (ImageStore, error) {
	if _, err := os.Stat(o.Address); err != nil {
		return nil, fmt.Errorf("containerd socket %s: %w (is containerd running?)", o.Address, err)
	}
	opts := containerd.Options{Address: o.Address, Namespace: o.Namespace}
	if o.RegistriesFile != "" {
		regs, err := containerd.LoadRegistries(o.RegistriesFile)
		if err != nil {
			return nil, err
		}
		opts.Registries = regs
	}
	return containerd.New(ctx, opts)
}
