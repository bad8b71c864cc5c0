package predicate_test

import (
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/handler"
	"github.com/converge-dev/converge/framework/predicate"
)

func cm(gen int64, rv string, labels, annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: api.ObjectMeta{Name: "x", Generation: gen, ResourceVersion: rv, Labels: labels, Annotations: annotations}}
}

func update(old, obj api.Object) handler.Event {
	return handler.Event{Type: cache.Updated, Object: obj, Old: old}
}

func TestPredicates(t *testing.T) {
	t.Parallel()
	base := cm(1, "1", map[string]string{"a": "1"}, map[string]string{"n": "1"})
	tests := []struct {
		name string
		p    predicate.Predicate
		ev   handler.Event
		want bool
	}{
		{"generation: added passes", predicate.GenerationChanged(), handler.Event{Type: cache.Added, Object: base}, true},
		{"generation: deleted passes", predicate.GenerationChanged(), handler.Event{Type: cache.Deleted, Object: base}, true},
		{"generation: same drops", predicate.GenerationChanged(), update(base, cm(1, "2", nil, nil)), false},
		{"generation: changed passes", predicate.GenerationChanged(), update(base, cm(2, "2", nil, nil)), true},
		{"rv: same drops", predicate.ResourceVersionChanged(), update(base, cm(1, "1", nil, nil)), false},
		{"rv: changed passes", predicate.ResourceVersionChanged(), update(base, cm(1, "2", nil, nil)), true},
		{"labels: same drops", predicate.LabelChanged(), update(base, cm(2, "2", map[string]string{"a": "1"}, nil)), false},
		{"labels: changed passes", predicate.LabelChanged(), update(base, cm(1, "2", map[string]string{"a": "2"}, nil)), true},
		{"annotations: same drops", predicate.AnnotationChanged(), update(base, cm(2, "2", nil, map[string]string{"n": "1"})), false},
		{"annotations: removed passes", predicate.AnnotationChanged(), update(base, cm(1, "2", nil, nil)), true},
		{"and", predicate.And(predicate.LabelChanged(), predicate.GenerationChanged()), update(base, cm(2, "2", map[string]string{"a": "1"}, nil)), false},
		{"or", predicate.Or(predicate.LabelChanged(), predicate.GenerationChanged()), update(base, cm(2, "2", map[string]string{"a": "1"}, nil)), true},
		{"not", predicate.Not(predicate.GenerationChanged()), update(base, cm(2, "2", nil, nil)), false},
		{"typed custom", predicate.New(func(ev cache.Event[*corev1.ConfigMap]) bool { return ev.Object.Data["k"] == "v" }),
			handler.Event{Type: cache.Added, Object: &corev1.ConfigMap{Data: map[string]string{"k": "v"}}}, true},
		{"typed custom: other type dropped", predicate.New(func(cache.Event[*corev1.Secret]) bool { return true }),
			handler.Event{Type: cache.Added, Object: base}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.p.Allow(tc.ev); got != tc.want {
				t.Errorf("Allow = %v, want %v", got, tc.want)
			}
		})
	}
}
