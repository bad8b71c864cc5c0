package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
)

// imageGC removes images no pod on this node uses, least recently used
// first, when the image filesystem is fuller than ImageGCHighThresholdPercent,
// until it is below ImageGCLowThresholdPercent (the kubelet's image garbage
// collection). It runs only on runtimes that are both cri.ImageService and
// cri.ImageFS.
type imageGC struct {
	mu       sync.Mutex
	lastUsed map[string]time.Time // by image ID: last container start, else first seen; guarded by mu
}

func newImageGC() *imageGC { return &imageGC{lastUsed: map[string]time.Time{}} }

// used records that a container is about to run image id.
func (g *imageGC) used(id string) {
	if id == "" {
		return
	}
	g.mu.Lock()
	g.lastUsed[id] = time.Now()
	g.mu.Unlock()
}

// runImageGC collects images every ImageGCInterval until ctx ends.
func (a *Agent) runImageGC(ctx context.Context) {
	is, ok1 := a.rt.(cri.ImageService)
	fs, ok2 := a.rt.(cri.ImageFS)
	if !ok1 || !ok2 {
		return
	}
	for sleepCtx(ctx, a.opts.ImageGCInterval) {
		if _, err := a.collectImages(ctx, is, fs); err != nil && ctx.Err() == nil {
			a.log.Error(err, "Image garbage collection failed")
			a.rec.Event(ctx, a.nodeObject(), "Warning", "ImageGCFailed", err.Error())
		}
	}
}

// collectImages removes unused images while the filesystem is above the
// high threshold, until it is below the low one; it returns the removed IDs.
func (a *Agent) collectImages(ctx context.Context, is cri.ImageService, fs cri.ImageFS) ([]string, error) {
	high, low := *a.opts.ImageGCHighThresholdPercent, *a.opts.ImageGCLowThresholdPercent
	usage, err := fs.ImageFsUsage(ctx)
	if err != nil {
		return nil, fmt.Errorf("image gc: %w", err)
	}
	if usage.CapacityBytes == 0 || percent(usage) < high {
		return nil, nil
	}
	// Images first seen or used from now on are kept until the next pass: a
	// pull under way for a new pod is not collected before its container starts.
	passStart := time.Now()
	inUse, err := a.imagesInUse(ctx, is)
	if err != nil {
		return nil, fmt.Errorf("image gc: %w", err)
	}
	imgs, err := is.ListImages(ctx)
	if err != nil {
		return nil, fmt.Errorf("image gc: %w", err)
	}
	g := a.images
	g.mu.Lock()
	now := time.Now()
	var candidates []cri.Image
	for _, img := range imgs {
		if _, ok := g.lastUsed[img.ID]; !ok {
			g.lastUsed[img.ID] = now // first seen
		}
		if !inUse[img.ID] && g.lastUsed[img.ID].Before(passStart) {
			candidates = append(candidates, img)
		}
	}
	slices.SortStableFunc(candidates, func(x, y cri.Image) int { return g.lastUsed[x.ID].Compare(g.lastUsed[y.ID]) })
	g.mu.Unlock()

	var removed []string
	var errs []error
	for _, img := range candidates {
		if percent(usage) < low && low > 0 {
			break
		}
		if err := is.RemoveImage(ctx, img.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		a.log.Info("Removed unused image", "image", img.Names, "id", img.ID, "size", img.Size)
		removed = append(removed, img.ID)
		g.mu.Lock()
		delete(g.lastUsed, img.ID)
		g.mu.Unlock()
		if usage, err = fs.ImageFsUsage(ctx); err != nil {
			return removed, fmt.Errorf("image gc: %w", err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("image gc: %w", err)
	}
	return removed, nil
}

func percent(u cri.FsUsage) int {
	return int(u.UsedBytes * 100 / u.CapacityBytes)
}

// imagesInUse returns the IDs of the images of every container of every pod
// this agent runs (whether running, waiting or exited).
func (a *Agent) imagesInUse(ctx context.Context, is cri.ImageService) (map[string]bool, error) {
	a.mu.Lock()
	refs := map[string]bool{}
	for _, w := range a.workers {
		pod := w.current()
		for _, c := range append(append([]string{}, containerImages(pod.Spec.InitContainers)...), containerImages(pod.Spec.Containers)...) {
			refs[c] = true
		}
	}
	a.mu.Unlock()
	ids := map[string]bool{}
	for ref := range refs {
		img, ok, err := is.ImageStatus(ctx, ref)
		if err != nil {
			return nil, err
		}
		if ok {
			ids[img.ID] = true
		}
	}
	return ids, nil
}

func containerImages(cs []corev1.Container) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Image)
	}
	return out
}

// nodeObject is the Node events about the node are recorded on.
func (a *Agent) nodeObject() *corev1.Node {
	n := &corev1.Node{}
	n.Name, n.UID = a.opts.NodeName, a.nodeUID
	return n
}
