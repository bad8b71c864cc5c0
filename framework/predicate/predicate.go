package predicate

import (
	"maps"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/cache"
	"github.com/converge-dev/converge/framework/handler"
)

// Predicate decides whether an event is passed on.
type Predicate interface {
	Allow(ev handler.Event) bool
}

// Func adapts a function to a Predicate.
type Func func(ev handler.Event) bool

var _ Predicate = Func(nil)

// Allow calls f(ev).
func (f Func) Allow(ev handler.Event) bool { return f(ev) }

// New adapts a function over typed events to a Predicate: events whose objects
// are not T are dropped. Use it for custom predicates that read fields of a
// concrete kind.
func New[T api.Object](fn func(ev cache.Event[T]) bool) Predicate {
	return Func(func(ev handler.Event) bool {
		obj, ok := ev.Object.(T)
		if !ok {
			return false
		}
		typed := cache.Event[T]{Type: ev.Type, Object: obj}
		if ev.Type == cache.Updated {
			if typed.Old, ok = ev.Old.(T); !ok {
				return false
			}
		}
		return fn(typed)
	})
}

// updateChanged passes every non-update event and updates where changed
// reports a difference.
func updateChanged(changed func(old, obj api.Object) bool) Predicate {
	return Func(func(ev handler.Event) bool {
		if ev.Type != cache.Updated || ev.Old == nil || ev.Object == nil {
			return true
		}
		return changed(ev.Old, ev.Object)
	})
}

// GenerationChanged passes updates that change metadata.generation, i.e. spec
// changes of kinds with a status subresource; status-only and metadata-only
// updates are dropped. Kinds without generation (always 0) never pass updates.
func GenerationChanged() Predicate {
	return updateChanged(func(old, obj api.Object) bool { return old.GetGeneration() != obj.GetGeneration() })
}

// ResourceVersionChanged passes updates that change metadata.resourceVersion
// (every real write; it drops only no-op redeliveries).
func ResourceVersionChanged() Predicate {
	return updateChanged(func(old, obj api.Object) bool { return old.GetResourceVersion() != obj.GetResourceVersion() })
}

// LabelChanged passes updates that change metadata.labels.
func LabelChanged() Predicate {
	return updateChanged(func(old, obj api.Object) bool { return !maps.Equal(old.GetLabels(), obj.GetLabels()) })
}

// AnnotationChanged passes updates that change metadata.annotations.
func AnnotationChanged() Predicate {
	return updateChanged(func(old, obj api.Object) bool {
		return !maps.Equal(old.GetAnnotations(), obj.GetAnnotations())
	})
}

// And passes an event when every predicate does (and when there are none).
func And(preds ...Predicate) Predicate {
	return Func(func(ev handler.Event) bool {
		for _, p := range preds {
			if !p.Allow(ev) {
				return false
			}
		}
		return true
	})
}

// Or passes an event when at least one predicate does.
func Or(preds ...Predicate) Predicate {
	return Func(func(ev handler.Event) bool {
		for _, p := range preds {
			if p.Allow(ev) {
				return true
			}
		}
		return false
	})
}

// Not inverts p.
func Not(p Predicate) Predicate {
	return Func(func(ev handler.Event) bool { return !p.Allow(ev) })
}
