package storage

import (
	"context"
	"errors"
)

// Sentinel errors; implementations wrap them and callers match with errors.Is.
var (
	// ErrNotFound: the key does not exist.
	ErrNotFound = errors.New("storage: key not found")
	// ErrExists: Create found the key already present.
	ErrExists = errors.New("storage: key already exists")
	// ErrConflict: the expected mod revision did not match.
	ErrConflict = errors.New("storage: revision mismatch")
	// ErrCompacted: the requested revision is older than the compaction point.
	ErrCompacted = errors.New("storage: required revision has been compacted")
	// ErrFutureRevision: the requested revision is newer than the store's.
	ErrFutureRevision = errors.New("storage: required revision is a future revision")
)

// KeyValue is one stored key.
type KeyValue struct {
	Key            string
	Value          []byte
	CreateRevision int64
	ModRevision    int64
	// Stale is set by a transforming store (framework/storage/encryption) when
	// Value was read with a provider or key other than the one writes use now:
	// an update must store the value again even if it did not change.
	Stale bool
}

// ListOptions select a page of keys under a prefix.
type ListOptions struct {
	// Revision reads at this store revision; 0 reads the latest.
	Revision int64
	// Limit caps the number of keys returned; 0 means no limit.
	Limit int64
	// StartKey continues a paginated list: keys >= StartKey are returned.
	StartKey string
}

// ListResult is one page of a list.
type ListResult struct {
	Items []KeyValue
	// Revision is the store revision the list was read at.
	Revision int64
	// More reports whether keys remain after the last item.
	More bool
	// Remaining counts the keys after the last item when More is set.
	Remaining int64
}

// EventType says what happened to a key.
type EventType int

// Event types.
const (
	EventPut EventType = iota + 1
	EventDelete
	// EventProgress carries no change: every change up to KV.ModRevision
	// was delivered before it. Sent only on watches whose context was made
	// with WithProgressEvents, after a ProgressRequester's RequestProgress.
	EventProgress
)

type progressKey struct{}

// WithProgressEvents marks ctx so that a watch made with it also receives
// EventProgress events.
func WithProgressEvents(ctx context.Context) context.Context {
	return context.WithValue(ctx, progressKey{}, true)
}

// ProgressEventsWanted reports whether ctx was made by WithProgressEvents.
func ProgressEventsWanted(ctx context.Context) bool {
	v, _ := ctx.Value(progressKey{}).(bool)
	return v
}

// ProgressRequester is implemented by stores that can tell their watches how
// far they are (etcd's progress requests): after RequestProgress, every
// watch made with WithProgressEvents receives an EventProgress with the
// store revision current then, once all changes up to it were delivered.
// Reads use it to learn that a watch-fed cache is up to date.
type ProgressRequester interface {
	RequestProgress(ctx context.Context) error
}

// Event is one change observed by a watch. For EventDelete, KV.Value is empty and
// Prev holds the last value; for EventPut, Prev holds the previous value when the
// key existed (nil on creation). Err is set on the last event of a failed watch
// (ErrCompacted when the start revision was compacted).
type Event struct {
	Type EventType
	KV   KeyValue
	Prev *KeyValue
	Err  error
}

// Interface is the storage contract. All methods are safe for concurrent use.
type Interface interface {
	// Get returns the key or ErrNotFound.
	Get(ctx context.Context, key string) (KeyValue, error)
	// Create stores the key if absent and returns the new revision, or ErrExists.
	Create(ctx context.Context, key string, value []byte) (int64, error)
	// Update replaces the key if its mod revision equals expected (0: any revision,
	// but the key must exist) and returns the new revision; ErrConflict on mismatch,
	// ErrNotFound if absent.
	Update(ctx context.Context, key string, value []byte, expected int64) (int64, error)
	// Delete removes the key if its mod revision equals expected (0: any) and returns
	// the deleted value and the deletion revision; ErrConflict, ErrNotFound.
	Delete(ctx context.Context, key string, expected int64) (KeyValue, int64, error)
	// List returns the keys under prefix in key order, a consistent snapshot at
	// opts.Revision (or the latest); ErrCompacted if that revision is gone.
	List(ctx context.Context, prefix string, opts ListOptions) (ListResult, error)
	// Count returns the number of keys under prefix.
	Count(ctx context.Context, prefix string) (int64, error)
	// Watch streams changes under prefix with revision > fromRevision (0: from the
	// revision current when Watch is called)
	// until ctx ends; the channel is closed then. Events arrive in revision order.
	Watch(ctx context.Context, prefix string, fromRevision int64) <-chan Event
	// CurrentRevision returns the latest store revision.
	CurrentRevision(ctx context.Context) (int64, error)
	// Compact discards history before revision.
	Compact(ctx context.Context, revision int64) error
}
