package cache

import "github.com/converge-dev/converge/framework/api"

// EventType says what happened to an object.
type EventType string

// Event types.
const (
	// Added: the object is new to the cache.
	Added EventType = "Added"
	// Updated: the object changed; Event.Old holds the previous cached state.
	Updated EventType = "Updated"
	// Deleted: the object is gone; Event.Object holds its last known state.
	Deleted EventType = "Deleted"
)

// Event is one change of the cache. Object is the new state (Added, Updated)
// or the last known state (Deleted: the final state reported by the watch, or
// the last cached state when the delete was inferred by a relist). Old is set
// for Updated only. There are no tombstones: Object is always a T.
type Event[T api.Object] struct {
	Type   EventType
	Object T
	Old    T
}
