package manager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
)

// group runs a set of Runnables under one context.
type group struct {
	log   logr.Logger
	onErr func(error) // set before start

	mu      sync.Mutex
	pending []Runnable      // added before start; guarded by mu
	added   []Runnable      // every runnable added; guarded by mu
	ctx     context.Context // set by start; guarded by mu
	cancel  context.CancelFunc
	stopped bool // guarded by mu
	wg      sync.WaitGroup
}

func newGroup(log logr.Logger) *group { return &group{log: log} }

func (g *group) add(r Runnable) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return errors.New("manager: stopping; runnable not added")
	}
	g.added = append(g.added, r)
	switch {
	case g.ctx == nil:
		g.pending = append(g.pending, r)
	default:
		g.run(r)
	}
	return nil
}

func (g *group) isRunning() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ctx != nil && !g.stopped
}

// start runs the pending Runnables and any added later under a child of parent.
func (g *group) start(parent context.Context) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped || g.ctx != nil {
		return
	}
	g.ctx, g.cancel = context.WithCancel(parent)
	for _, r := range g.pending {
		g.run(r)
	}
	g.pending = nil
}

// run starts r; g.mu must be held.
func (g *group) run(r Runnable) {
	ctx := g.ctx
	g.wg.Go(func() {
		if err := r.Start(ctx); err != nil {
			g.onErr(fmt.Errorf("manager: runnable %T: %w", r, err))
		}
	})
}

// stop cancels the group and waits for its Runnables until ctx ends; it
// reports whether they all returned.
func (g *group) stop(ctx context.Context) bool {
	g.mu.Lock()
	g.stopped = true
	if g.cancel != nil {
		g.cancel()
	}
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// runnables returns every runnable added to g.
func (g *group) runnables() []Runnable {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.added)
}
