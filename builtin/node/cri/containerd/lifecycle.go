package containerd

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// Status reports the container's state.
func (r *Runtime) Status(ctx context.Context, id string) (cri.ContainerStatus, error) {
	ctx = r.nsCtx(ctx)
	if c := r.lookupRunning(id); c != nil {
		return c.status(), nil
	}
	cont, err := r.load(ctx, id)
	if err != nil {
		return cri.ContainerStatus{}, err
	}
	return r.statusOf(ctx, cont)
}

// status of a container started by this Runtime.
func (c *container) status() cri.ContainerStatus {
	st := cri.ContainerStatus{ID: c.id, StartedAt: c.startedAt}
	if !c.exited() {
		st.State, st.PID = cri.StateRunning, c.pid
		return st
	}
	if c.waitErr != nil {
		st.State, st.Reason = cri.StateUnknown, "Error"
		return st
	}
	st.State, st.ExitCode, st.FinishedAt = cri.StateExited, c.exitCode, c.finishedAt
	st.Reason = reason(c.exitCode, c.oomKilled)
	return st
}

func reason(code int, oom bool) string {
	switch {
	case oom:
		return "OOMKilled"
	case code == 0:
		return "Completed"
	default:
		return "Error"
	}
}

// statusOf asks containerd about a container this Runtime did not start.
func (r *Runtime) statusOf(ctx context.Context, cont client.Container) (cri.ContainerStatus, error) {
	st := cri.ContainerStatus{ID: cont.ID()}
	labels, err := cont.Labels(ctx)
	if err != nil {
		return st, fmt.Errorf("status of container %s: %w", cont.ID(), err)
	}
	if t, err := time.Parse(time.RFC3339Nano, labels[LabelStartedAt]); err == nil {
		st.StartedAt = t
	}
	task, err := loadTask(ctx, cont)
	if err != nil {
		return st, fmt.Errorf("status of container %s: %w", cont.ID(), err)
	}
	if task == nil {
		st.State = cri.StateCreated
		return st, nil
	}
	ts, err := task.Status(ctx)
	if err != nil {
		return st, fmt.Errorf("status of container %s: %w", cont.ID(), err)
	}
	switch ts.Status {
	case client.Running, client.Paused, client.Pausing:
		st.State, st.PID = cri.StateRunning, int(task.Pid())
	case client.Created:
		st.State = cri.StateCreated
	case client.Stopped:
		spec, err := cont.Spec(ctx)
		if err != nil {
			return st, fmt.Errorf("status of container %s: %w", cont.ID(), err)
		}
		st.State, st.ExitCode, st.FinishedAt = cri.StateExited, int(ts.ExitStatus), ts.ExitTime
		st.Reason = reason(st.ExitCode, oomKilled(cgroupsPath(spec)))
	default:
		st.State = cri.StateUnknown
	}
	return st, nil
}

// Wait blocks until the container exits (and its log is flushed) or ctx ends.
func (r *Runtime) Wait(ctx context.Context, id string) (cri.ContainerStatus, error) {
	ctx = r.nsCtx(ctx)
	if c := r.lookupRunning(id); c != nil {
		select {
		case <-c.done:
			return c.status(), nil
		case <-ctx.Done():
			return c.status(), fmt.Errorf("wait for container %s: %w", id, ctx.Err())
		}
	}
	cont, err := r.load(ctx, id)
	if err != nil {
		return cri.ContainerStatus{}, err
	}
	task, err := loadTask(ctx, cont)
	if err != nil {
		return cri.ContainerStatus{}, err
	}
	if task != nil {
		ch, err := task.Wait(ctx)
		if err != nil {
			return cri.ContainerStatus{}, fmt.Errorf("wait for container %s: %w", id, err)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			st, _ := r.statusOf(context.WithoutCancel(ctx), cont)
			return st, fmt.Errorf("wait for container %s: %w", id, ctx.Err())
		}
	}
	return r.statusOf(ctx, cont)
}

// Stop sends SIGTERM, waits up to grace for the exit, then kills every process
// of the container. Stopping an exited container is a no-op.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) error {
	ctx = r.nsCtx(ctx)
	log := logr.FromContextOrDiscard(ctx)
	task, exited, err := r.taskAndExit(ctx, id)
	if err != nil || task == nil {
		return err
	}
	select {
	case <-exited:
		return nil
	default:
	}
	if grace > 0 {
		if err := task.Kill(ctx, syscall.SIGTERM); err != nil && !isGone(err) {
			return fmt.Errorf("stop container %s: send SIGTERM: %w", id, err)
		}
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-exited:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("stop container %s: %w", id, ctx.Err())
		case <-timer.C:
			log.V(1).Info("Container did not stop within its grace period; killing it", "container", id, "grace", grace)
		}
	}
	if err := task.Kill(ctx, syscall.SIGKILL, client.WithKillAll); err != nil && !isGone(err) {
		return fmt.Errorf("stop container %s: send SIGKILL: %w", id, err)
	}
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop container %s: wait after SIGKILL: %w", id, ctx.Err())
	}
}

// taskAndExit returns the container's task and a channel closed when it has
// exited (and, for containers this Runtime started, its log is flushed). The
// task is nil when the container has none.
func (r *Runtime) taskAndExit(ctx context.Context, id string) (client.Task, <-chan struct{}, error) {
	if c := r.lookupRunning(id); c != nil {
		return c.task, c.done, nil
	}
	cont, err := r.load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	task, err := loadTask(ctx, cont)
	if err != nil || task == nil {
		return nil, nil, err
	}
	ch, err := task.Wait(context.WithoutCancel(ctx))
	if err != nil {
		return nil, nil, fmt.Errorf("wait for container %s: %w", id, err)
	}
	exited := make(chan struct{})
	go func() { <-ch; close(exited) }() // ends with the task (or the client)
	return task, exited, nil
}

// Remove deletes the container's task, the container and its snapshot, killing
// the container first if it still runs.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	ctx = r.nsCtx(ctx)
	cont, err := r.load(ctx, id)
	if err != nil {
		return err
	}
	if err := r.remove(ctx, cont); err != nil {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	return nil
}

func (r *Runtime) remove(ctx context.Context, cont client.Container) error {
	id := cont.ID()
	var (
		task   client.Task
		exited <-chan struct{}
		err    error
	)
	if c := r.lookupRunning(id); c != nil {
		task, exited = c.task, c.done
	} else if task, exited, err = r.taskAndExit(ctx, id); err != nil {
		return err
	}
	if task != nil {
		select {
		case <-exited:
		default:
			if err := task.Kill(ctx, syscall.SIGKILL, client.WithKillAll); err != nil && !isGone(err) {
				return fmt.Errorf("kill: %w", err)
			}
			select {
			case <-exited:
			case <-ctx.Done():
				return fmt.Errorf("wait after SIGKILL: %w", ctx.Err())
			}
		}
		if _, err := task.Delete(ctx); err != nil && !isGone(err) {
			return fmt.Errorf("delete task: %w", err)
		}
	}
	r.mu.Lock()
	delete(r.running, id)
	r.mu.Unlock()
	if err := cont.Delete(ctx, client.WithSnapshotCleanup); err != nil && !isGone(err) {
		return fmt.Errorf("delete container: %w", err)
	}
	return nil
}

// RemoveAll kills and removes every container in the runtime's namespace
// (tests, and an agent leaving the cluster).
func (r *Runtime) RemoveAll(ctx context.Context) error {
	ctx = r.nsCtx(ctx)
	conts, err := r.client.Containers(ctx)
	if err != nil {
		return fmt.Errorf("list containers: %w", err)
	}
	var errs []error
	for _, c := range conts {
		if err := r.remove(ctx, c); err != nil {
			errs = append(errs, fmt.Errorf("remove container %s: %w", c.ID(), err))
		}
	}
	return errors.Join(errs...)
}
