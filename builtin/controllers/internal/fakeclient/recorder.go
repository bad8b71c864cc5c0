package fakeclient

import (
	"context"
	"slices"
	"sync"

	"github.com/converge-dev/converge/framework/api"
)

// Recorder records events in memory, like record.Recorder's Event. It is safe
// for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []string // "Type/Reason: message"; guarded by mu
}

// Event records one event.
func (r *Recorder) Event(_ context.Context, _ api.Object, eventType, reason, message string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, eventType+"/"+reason+": "+message)
}

// Events returns the events recorded so far as "Type/Reason: message".
func (r *Recorder) Events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}
