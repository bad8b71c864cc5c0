package apiserver

import "github.com/converge-dev/converge/framework/api/sharedmaps"

// fieldSets lets a watch cache's objects share their labels and selectable
// fields maps (sharedmaps): the objects of one workload have equal labels,
// and without metadata.name (objectFields) the selectable fields of most pods
// in a namespace are equal too. Two maps per object were ≈800 bytes of every
// cached pod. The shared maps are never written after they are built.
type fieldSets struct{ t *sharedmaps.Table }

func newFieldSets() fieldSets { return fieldSets{sharedmaps.NewTable(0)} }

// share replaces o's labels and fields with equal maps seen before.
func (s fieldSets) share(o *cachedObject) {
	o.labels = s.t.Share(o.labels, nil)
	o.fields = s.t.Share(o.fields, nil)
}
