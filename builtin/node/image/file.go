package image

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/containerd/containerd/v2/client"
)

// DefaultNamespace is the containerd namespace Converge keeps images and
// containers in (the containerd runtime's default too).
const DefaultNamespace = "converge"

// ImportFileOptions configure ImportFile. Zero values mean defaults.
type ImportFileOptions struct {
	// Address is containerd's socket. Required.
	Address string
	// Namespace receives the images (default "converge").
	Namespace string
	// Path is the archive (OCI layout or `docker save` tar). Required.
	Path string
}

// ImportFile connects to containerd and imports the archive at opts.Path (the
// `converge image import` command). It returns the imported image names.
func ImportFile(ctx context.Context, opts ImportFileOptions) ([]string, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	var errs []error
	if opts.Address == "" {
		errs = append(errs, errors.New("containerd address is required"))
	}
	if opts.Path == "" {
		errs = append(errs, errors.New("archive path is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("import image: %w", err)
	}
	f, err := os.Open(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("import image: %w", err)
	}
	defer f.Close()
	if _, err := os.Stat(opts.Address); err != nil {
		return nil, fmt.Errorf("import image: containerd socket %s: %w (is containerd running?)", opts.Address, err)
	}
	c, err := client.New(opts.Address, client.WithDefaultNamespace(opts.Namespace), client.WithTimeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("import image: connect to containerd at %s: %w", opts.Address, err)
	}
	defer c.Close()
	names, err := Import(ctx, c, f)
	if err != nil {
		return nil, fmt.Errorf("import image %s: %w", opts.Path, err)
	}
	return names, nil
}
