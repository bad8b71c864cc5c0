package filters

import "context"

// WatchInitSignal is told when a watch has sent its initial events (the
// state a resourceVersion=0 or sendInitialEvents=true watch starts with).
// Priority and fairness holds a watch's seats until then, as Kubernetes'
// filter does with its initialization signal.
type WatchInitSignal interface {
	// Signal says the initial events are sent; calls after the first do
	// nothing.
	Signal()
}

type watchInitKey struct{}

// WithWatchInitSignal returns ctx carrying s.
func WithWatchInitSignal(ctx context.Context, s WatchInitSignal) context.Context {
	return context.WithValue(ctx, watchInitKey{}, s)
}

// WatchInitialized tells the signal in ctx, if any, that the watch's initial
// events are sent (Kubernetes' WatchInitialized).
func WatchInitialized(ctx context.Context) {
	if s, ok := ctx.Value(watchInitKey{}).(WatchInitSignal); ok {
		s.Signal()
	}
}
