package node

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/framework/api"
)

// fakeImages is an image store on a 100-byte filesystem whose usage is the
// sum of its images' sizes.
type fakeImages struct {
	imgs    []cri.Image
	removed []string
}

func (f *fakeImages) PullImage(context.Context, string, []cri.Credential) (cri.PullResult, error) {
	return cri.PullResult{}, nil
}

func (f *fakeImages) ImageStatus(_ context.Context, ref string) (cri.Image, bool, error) {
	for _, i := range f.imgs {
		if slices.Contains(i.Names, ref) {
			return i, true, nil
		}
	}
	return cri.Image{}, false, nil
}

func (f *fakeImages) ListImages(context.Context) ([]cri.Image, error) {
	return slices.Clone(f.imgs), nil
}

func (f *fakeImages) RemoveImage(_ context.Context, id string) error {
	f.imgs = slices.DeleteFunc(f.imgs, func(i cri.Image) bool { return i.ID == id })
	f.removed = append(f.removed, id)
	return nil
}

func (f *fakeImages) ImageFsUsage(context.Context) (cri.FsUsage, error) {
	var used uint64
	for _, i := range f.imgs {
		used += uint64(i.Size)
	}
	return cri.FsUsage{Path: "/fake", UsedBytes: used, CapacityBytes: 100}, nil
}

func TestCollectImages(t *testing.T) {
	img := func(id string, size int64) cri.Image {
		return cri.Image{ID: id, Names: []string{"img-" + id}, Size: size}
	}
	for _, c := range []struct {
		name      string
		high, low int
		want      []string
	}{
		{"below the high threshold: nothing", 95, 50, nil},
		// 90% used; old (20) goes first, then mid (20): 50% < 60%; new and the in-use one stay.
		{"least recently used first, until below low", 85, 60, []string{"old", "mid"}},
		{"zero thresholds: every unused image", 0, 0, []string{"old", "mid", "new"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeImages{imgs: []cri.Image{img("new", 20), img("used", 30), img("mid", 20), img("old", 20)}}
			a := &Agent{opts: Options{ImageGCHighThresholdPercent: api.Ptr(c.high), ImageGCLowThresholdPercent: api.Ptr(c.low)},
				log: logr.Discard(), images: newImageGC(), workers: map[string]*podWorker{}}
			pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img-used"}}}}
			a.workers["uid"] = &podWorker{pod: pod}
			past := time.Now().Add(-time.Hour)
			a.images.lastUsed = map[string]time.Time{"old": past, "mid": past.Add(time.Minute), "new": past.Add(2 * time.Minute), "used": past}
			removed, err := a.collectImages(t.Context(), f, f)
			if err != nil || !slices.Equal(removed, c.want) || !slices.Equal(f.removed, c.want) {
				t.Errorf("collectImages removed %v (runtime saw %v), %v; want %v", removed, f.removed, err, c.want)
			}
			if c.high > 0 {
				return
			}
			// An image first seen in a pass survives it, and goes in the next.
			f.imgs = append(f.imgs, img("fresh", 10))
			if removed, err := a.collectImages(t.Context(), f, f); err != nil || len(removed) != 0 {
				t.Errorf("pass after a new image removed %v, %v; want nothing", removed, err)
			}
			time.Sleep(time.Millisecond)
			if removed, err := a.collectImages(t.Context(), f, f); err != nil || !slices.Equal(removed, []string{"fresh"}) {
				t.Errorf("next pass removed %v, %v; want [fresh]", removed, err)
			}
		})
	}
}
