package cri

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Tracked is a container as a Table sees it.
type Tracked interface {
	// Status returns the container's current status.
	Status() ContainerStatus
	// Done is closed once the container has exited and its final status is set.
	Done() <-chan struct{}
	// Term asks the container to exit (SIGTERM) and returns at once.
	Term()
	// Kill makes the container exit (SIGKILL) and returns at once.
	Kill()
}

// KillTimeout bounds how long Table.Stop waits for a killed container to exit.
const KillTimeout = 10 * time.Second

// Table holds the containers of a runtime that keeps them in its own memory
// (process, simulated) by ID, and carries out the parts of the Runtime
// contract that need no more than Tracked: Status, Wait and Stop. The zero
// value is an empty table; it is safe for concurrent use.
type Table[C Tracked] struct {
	mu         sync.Mutex
	containers map[string]C // guarded by mu
}

// Add records c under id, replacing any container recorded there.
func (t *Table[C]) Add(id string, c C) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.containers == nil {
		t.containers = map[string]C{}
	}
	t.containers[id] = c
}

// Delete forgets the container id (nothing if there is none).
func (t *Table[C]) Delete(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.containers, id)
}

// Get returns the container id, or an error wrapping ErrNotFound.
func (t *Table[C]) Get(id string) (C, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.containers[id]
	if !ok {
		return c, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return c, nil
}

// All returns every container, in no particular order.
func (t *Table[C]) All() []C {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]C, 0, len(t.containers))
	for _, c := range t.containers {
		out = append(out, c)
	}
	return out
}

// Status is Runtime.Status.
func (t *Table[C]) Status(id string) (ContainerStatus, error) {
	c, err := t.Get(id)
	if err != nil {
		return ContainerStatus{}, err
	}
	return c.Status(), nil
}

// Wait is Runtime.Wait.
func (t *Table[C]) Wait(ctx context.Context, id string) (ContainerStatus, error) {
	c, err := t.Get(id)
	if err != nil {
		return ContainerStatus{}, err
	}
	select {
	case <-c.Done():
		return c.Status(), nil
	case <-ctx.Done():
		return ContainerStatus{}, ctx.Err()
	}
}

// Stop is Runtime.Stop: nothing for an exited container; with a positive
// grace, Term and wait up to grace (or until ctx ends) for the exit; then
// Kill and wait up to KillTimeout for the exit.
func (t *Table[C]) Stop(ctx context.Context, id string, grace time.Duration) error {
	c, err := t.Get(id)
	if err != nil {
		return err
	}
	select {
	case <-c.Done():
		return nil
	default:
	}
	if grace > 0 {
		c.Term()
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-c.Done():
			return nil
		case <-timer.C:
		case <-ctx.Done():
		}
	}
	c.Kill()
	timer := time.NewTimer(KillTimeout)
	defer timer.Stop()
	select {
	case <-c.Done():
		return nil
	case <-timer.C:
		return fmt.Errorf("stop container %s: it did not exit within %s of being killed", id, KillTimeout)
	}
}
