package containerd

import (
	"context"
	"fmt"
	"sync"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/content"
	"github.com/opencontainers/image-spec/identity"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// imageMeta is what container starts and ImageStatus read of an image. It
// is derived from the image's manifest, whose digest names it: read once per
// manifest digest and remembered (metas), it saves each start the content
// reads of the manifest and config (several containerd calls, each queued
// behind the others during a burst of starts).
type imageMeta struct {
	// chainID names the snapshot of the unpacked image: the parent of a
	// container's snapshot.
	chainID string
	// config is the config descriptor with the blob in its Data, so that
	// spec options read it without a call.
	config ocispec.Descriptor
	size   int64
}

// metas remembers imageMeta by manifest digest.
type metas struct {
	mu sync.Mutex
	m  map[string]*imageMeta // guarded by mu
}

// meta returns img's imageMeta, reading it on first use.
func (r *Runtime) meta(ctx context.Context, img client.Image) (*imageMeta, error) {
	key := img.Target().Digest.String()
	r.metas.mu.Lock()
	m := r.metas.m[key]
	r.metas.mu.Unlock()
	if m != nil {
		return m, nil
	}
	diffIDs, err := img.RootFS(ctx)
	if err != nil {
		return nil, fmt.Errorf("read layers of image %s: %w", img.Name(), err)
	}
	desc, err := img.Config(ctx)
	if err != nil {
		return nil, fmt.Errorf("read config of image %s: %w", img.Name(), err)
	}
	if desc.Data, err = content.ReadBlob(ctx, img.ContentStore(), desc); err != nil {
		return nil, fmt.Errorf("read config of image %s: %w", img.Name(), err)
	}
	size, err := img.Size(ctx)
	if err != nil {
		return nil, fmt.Errorf("read size of image %s: %w", img.Name(), err)
	}
	m = &imageMeta{chainID: identity.ChainID(diffIDs).String(), config: desc, size: size}
	r.metas.mu.Lock()
	if r.metas.m == nil {
		r.metas.m = map[string]*imageMeta{}
	}
	r.metas.m[key] = m
	r.metas.mu.Unlock()
	return m, nil
}

// forgetMetas drops what meta remembered (after images were removed).
func (r *Runtime) forgetMetas() {
	r.metas.mu.Lock()
	r.metas.m = nil
	r.metas.mu.Unlock()
}

// metaImage is an oci.Image whose config is served from an imageMeta.
type metaImage struct {
	client.Image
	m *imageMeta
}

func (i metaImage) Config(context.Context) (ocispec.Descriptor, error) { return i.m.config, nil }
