package containerd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/images"
	"github.com/containerd/containerd/v2/core/remotes/docker"
	"github.com/containerd/errdefs"
	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/image"
)

var (
	_ cri.ImageService = (*Runtime)(nil)
	_ cri.ImageFS      = (*Runtime)(nil)
)

// pullCall is one pull in flight, shared by every caller pulling the same
// normalized reference with the same credentials (a caller without a
// pod's credentials must not be handed that pod's pull).
type pullCall struct {
	done    chan struct{} // closed when res and err are set
	res     cri.PullResult
	err     error
	waiters int                // callers still waiting; guarded by Runtime.pullMu
	cancel  context.CancelFunc // cancels the pull once no caller waits
}

// PullImage pulls ref through the registries configuration and unpacks it
// into the runtime's snapshotter. Concurrent pulls of one reference with the
// same credentials share a pull, which runs until it ends or every caller
// gave up.
func (r *Runtime) PullImage(ctx context.Context, ref string, creds []cri.Credential) (cri.PullResult, error) {
	begin := time.Now()
	name := image.Normalize(ref)
	key := pullKey(name, creds)
	r.pullMu.Lock()
	c := r.pulls[key]
	if c == nil {
		pctx, cancel := context.WithCancel(withClientLog(r.nsCtx(context.WithoutCancel(ctx))))
		c = &pullCall{done: make(chan struct{}), cancel: cancel}
		r.pulls[key] = c
		go r.runPull(pctx, c, ref, name, key, creds)
	}
	c.waiters++
	r.pullMu.Unlock()
	select {
	case <-c.done:
		res := c.res
		res.Waited = time.Since(begin)
		return res, c.err
	case <-ctx.Done():
		r.pullMu.Lock()
		if c.waiters--; c.waiters == 0 {
			c.cancel()
			if r.pulls[key] == c { // later callers start a new pull
				delete(r.pulls, key)
			}
		}
		r.pullMu.Unlock()
		return cri.PullResult{}, fmt.Errorf("pull image %q: %w", ref, ctx.Err())
	}
}

// pullKey identifies the pulls that can be shared: same image, same
// credentials.
func pullKey(name string, creds []cri.Credential) string {
	h := sha256.New()
	for _, c := range creds {
		for _, f := range []string{c.Host, c.Username, c.Password, c.IdentityToken, c.RegistryToken} {
			h.Write([]byte(f))
			h.Write([]byte{0})
		}
	}
	return name + "#" + hex.EncodeToString(h.Sum(nil))
}

func (r *Runtime) runPull(ctx context.Context, c *pullCall, ref, name, key string, creds []cri.Credential) {
	defer c.cancel()
	begin := time.Now()
	img, err := r.pull(ctx, ref, name, creds)
	c.res = cri.PullResult{Image: img, Duration: time.Since(begin)}
	c.err = err
	r.pullMu.Lock()
	if r.pulls[key] == c {
		delete(r.pulls, key)
	}
	r.pullMu.Unlock()
	close(c.done)
}

func (r *Runtime) pull(ctx context.Context, ref, name string, creds []cri.Credential) (cri.Image, error) {
	log := logr.FromContextOrDiscard(ctx)
	hosts, done := r.registries.hosts(creds)
	defer done()
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: hosts})
	img, err := r.client.Pull(ctx, name,
		client.WithResolver(resolver),
		client.WithPullUnpack,
		client.WithPullSnapshotter(r.snapshotter))
	if err != nil {
		return cri.Image{}, fmt.Errorf("pull image %q: %w", ref, err)
	}
	info, err := r.describe(ctx, img)
	if err != nil {
		return cri.Image{}, fmt.Errorf("pull image %q: %w", ref, err)
	}
	log.V(1).Info("Pulled image", "image", name, "id", info.ID, "size", info.Size)
	return info, nil
}

// describe reads an image's ID (config digest) and size.
func (r *Runtime) describe(ctx context.Context, img client.Image) (cri.Image, error) {
	info := cri.Image{Names: []string{img.Name()}, Digest: img.Target().Digest.String(), ID: img.Target().Digest.String()}
	if cfg, err := img.Config(ctx); err == nil {
		info.ID = cfg.Digest.String()
	} else if !errdefs.IsNotFound(err) {
		return info, fmt.Errorf("read config of image %s: %w", img.Name(), err)
	}
	size, err := img.Size(ctx)
	if err != nil && !errdefs.IsNotFound(err) {
		return info, fmt.Errorf("read size of image %s: %w", img.Name(), err)
	}
	info.Size = size
	return info, nil
}

// ImageStatus reports the local image ref names (looked up like Start does).
func (r *Runtime) ImageStatus(ctx context.Context, ref string) (cri.Image, bool, error) {
	ctx = r.nsCtx(ctx)
	img, err := r.image(ctx, ref)
	if errors.Is(err, cri.ErrImageNotPresent) {
		return cri.Image{}, false, nil
	}
	if err != nil {
		return cri.Image{}, false, err
	}
	if m, err := r.meta(ctx, img); err == nil { // what a start reads too, remembered
		return cri.Image{Names: []string{img.Name()}, Digest: img.Target().Digest.String(), ID: m.config.Digest.String(), Size: m.size}, true, nil
	}
	info, err := r.describe(ctx, img)
	if err != nil {
		return cri.Image{}, false, err
	}
	return info, true, nil
}

// ListImages returns the local images, one per ID with all its names.
func (r *Runtime) ListImages(ctx context.Context) ([]cri.Image, error) {
	ctx = r.nsCtx(ctx)
	imgs, err := r.client.ListImages(ctx)
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	var out []cri.Image
	byID := map[string]int{}
	for _, img := range imgs {
		info, err := r.describe(ctx, img)
		if err != nil {
			return nil, err
		}
		if i, ok := byID[info.ID]; ok {
			out[i].Names = append(out[i].Names, info.Names...)
			continue
		}
		byID[info.ID] = len(out)
		out = append(out, info)
	}
	return out, nil
}

// RemoveImage deletes the name ref, or every name of the image whose ID is
// ref; containerd then collects the content and snapshots nothing uses.
func (r *Runtime) RemoveImage(ctx context.Context, ref string) error {
	ctx = r.nsCtx(ctx)
	var names []string
	if img, err := r.image(ctx, ref); err == nil {
		names = append(names, img.Name())
	} else if !errors.Is(err, cri.ErrImageNotPresent) {
		return fmt.Errorf("remove image %q: %w", ref, err)
	} else {
		all, err := r.ListImages(ctx)
		if err != nil {
			return fmt.Errorf("remove image %q: %w", ref, err)
		}
		for _, i := range all {
			if i.ID == ref {
				names = append(names, i.Names...)
			}
		}
	}
	for i, n := range names {
		var opts []images.DeleteOpt
		if i == len(names)-1 {
			opts = append(opts, images.SynchronousDelete()) // collect garbage once, at the end
		}
		if err := r.client.ImageService().Delete(ctx, n, opts...); err != nil && !errdefs.IsNotFound(err) {
			return fmt.Errorf("remove image %s: %w", n, err)
		}
	}
	r.unpacked.Clear() // the collection may have taken snapshots
	r.forgetMetas()
	return nil
}

// ImageFsUsage reports the filesystem of containerd's content store.
func (r *Runtime) ImageFsUsage(ctx context.Context) (cri.FsUsage, error) {
	ctx = r.nsCtx(ctx)
	resp, err := r.client.IntrospectionService().Plugins(ctx, `type=="io.containerd.content.v1"`)
	if err != nil {
		return cri.FsUsage{}, fmt.Errorf("find containerd's content store: %w", err)
	}
	var root string
	for _, p := range resp.Plugins {
		if p.Exports["root"] != "" {
			root = p.Exports["root"]
			break
		}
	}
	if root == "" {
		return cri.FsUsage{}, errors.New("find containerd's content store: no content plugin exports its root")
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return cri.FsUsage{}, fmt.Errorf("statfs %s: %w", root, err)
	}
	bs := uint64(st.Bsize)
	return cri.FsUsage{Path: root, CapacityBytes: st.Blocks * bs, UsedBytes: (st.Blocks - st.Bfree) * bs}, nil
}

// Push pushes the local image src to a registry as dst (src's own name when
// dst is empty), tagging it dst locally first. creds and the registries
// configuration authenticate as for pulls; loopback registries are plain HTTP.
func (r *Runtime) Push(ctx context.Context, src, dst string, creds []cri.Credential) (cri.Image, error) {
	ctx = withClientLog(r.nsCtx(ctx))
	img, err := r.image(ctx, src)
	if err != nil {
		return cri.Image{}, fmt.Errorf("push image: %w", err)
	}
	name := img.Name()
	if dst != "" && image.Normalize(dst) != name {
		name = image.Normalize(dst)
		rec := images.Image{Name: name, Target: img.Target()}
		if _, err := r.client.ImageService().Create(ctx, rec); errdefs.IsAlreadyExists(err) {
			_, err = r.client.ImageService().Update(ctx, rec, "target")
			if err != nil {
				return cri.Image{}, fmt.Errorf("push image: tag %s as %s: %w", img.Name(), name, err)
			}
		} else if err != nil {
			return cri.Image{}, fmt.Errorf("push image: tag %s as %s: %w", img.Name(), name, err)
		}
	}
	hosts, done := r.registries.hosts(creds)
	defer done()
	resolver := docker.NewResolver(docker.ResolverOptions{Hosts: hosts})
	if err := r.client.Push(ctx, name, img.Target(), client.WithResolver(resolver)); err != nil {
		return cri.Image{}, fmt.Errorf("push image %s: %w", name, err)
	}
	info, err := r.describe(ctx, img)
	if err != nil {
		return cri.Image{}, err
	}
	info.Names = []string{name}
	return info, nil
}
