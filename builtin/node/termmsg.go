package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/logs"
)

// Termination messages, as the kubelet reports them:
//   - every container start gets its own empty host file, world-writable (a
//     non-root user can write it), bind-mounted at the container's
//     terminationMessagePath (default /dev/termination-log). The runtime must
//     keep mounts private (cri.PrivateMounter): the process runtime without
//     mount namespaces would otherwise put it on the host's own path, so there
//     the container gets none and only the log fallback applies;
//   - when the container exits, the last 4096 bytes of that file are
//     state.terminated.message (and lastState's once it restarts);
//   - with terminationMessagePolicy FallbackToLogsOnError, a container that
//     exited non-zero with an empty (or missing) file reports the tail of its
//     log instead: its last 80 lines, of which the last 2048 bytes;
//   - a pod's messages together stay within 12 KiB: each container's is cut
//     to 12 KiB divided by the number of containers (init, app, ephemeral)
//     when the status is written (capTerminationMessages).
const (
	maxTerminationMessage    = 4 * 1024
	maxPodTerminationMessage = 12 * 1024
	maxFallbackLogLines      = 80
	maxFallbackLogBytes      = 2 * 1024
)

// terminationMessageFile is the host file of attempt of container name.
func (w *podWorker) terminationMessageFile(name string, attempt int) string {
	return filepath.Join(w.dir, "containers", name, strconv.Itoa(attempt))
}

// terminationMessageMount creates the termination message file of attempt
// and mounts it at the container's terminationMessagePath, unless the path is
// unset, the container mounts something there itself, or the runtime's
// mounts are not private to the container. The previous attempt's file goes:
// its message is already in the status.
func (w *podWorker) terminationMessageMount(spec *cri.ContainerSpec, c corev1.Container, attempt int) error {
	if c.TerminationMessagePath == "" || !w.a.privateMounts() {
		return nil
	}
	target := filepath.Clean(c.TerminationMessagePath)
	if slices.ContainsFunc(spec.Mounts, func(m cri.Mount) bool { return filepath.Clean(m.ContainerPath) == target }) {
		return nil
	}
	path := w.terminationMessageFile(c.Name, attempt)
	if attempt > 0 {
		_ = os.Remove(w.terminationMessageFile(c.Name, attempt-1))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the termination message directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o666)
	if err != nil {
		return fmt.Errorf("create the termination message file: %w", err)
	}
	_ = f.Close()
	// The umask applied at creation; any user of the container may write it.
	if err := os.Chmod(path, 0o666); err != nil {
		return fmt.Errorf("make the termination message file writable: %w", err)
	}
	spec.Mounts = append(spec.Mounts, cri.Mount{HostPath: path, ContainerPath: target})
	return nil
}

// terminationMessage is the message of container c that ran as spec and
// exited with code: its termination message file, else (FallbackToLogsOnError
// and a failure) the tail of its log.
func terminationMessage(ctx context.Context, c corev1.Container, spec cri.ContainerSpec, code int) string {
	fallback := c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError && code != 0
	msg, useLogs := terminationMessageFromFile(c, spec, fallback)
	if !useLogs {
		return msg
	}
	return tailLog(ctx, spec.LogPath)
}

// terminationMessageFromFile reads the end of the file mounted at the
// container's terminationMessagePath, and reports whether the log should be
// used instead (fallback and no message).
func terminationMessageFromFile(c corev1.Container, spec cri.ContainerSpec, fallback bool) (string, bool) {
	if c.TerminationMessagePath == "" {
		return "", fallback
	}
	target := filepath.Clean(c.TerminationMessagePath)
	i := slices.IndexFunc(spec.Mounts, func(m cri.Mount) bool { return filepath.Clean(m.ContainerPath) == target })
	if i < 0 {
		return "", fallback
	}
	path := spec.Mounts[i].HostPath
	data, err := readTail(path, maxTerminationMessage)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fallback
		}
		return fmt.Sprintf("Error on reading termination log %s: %v", path, err), false
	}
	return string(data), fallback && len(data) == 0
}

// readTail returns at most the last n bytes of the file at path.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if size := fi.Size(); size > n {
		if _, err := f.Seek(size-n, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, n))
}

// tailLog renders the last maxFallbackLogLines lines of the CRI log at path
// and keeps their last maxFallbackLogBytes bytes.
func tailLog(ctx context.Context, path string) string {
	var buf bytes.Buffer
	lines := int64(maxFallbackLogLines)
	if err := logs.Write(ctx, &buf, path, logs.Options{TailLines: &lines}, nil); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return ""
		}
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	b := buf.Bytes()
	if len(b) > maxFallbackLogBytes {
		b = b[len(b)-maxFallbackLogBytes:]
	}
	return string(b)
}

// capTerminationMessages cuts every termination message of the statuses to
// the pod's budget shared by its n containers, as the kubelet does before
// writing a status.
func capTerminationMessages(n int, lists ...[]corev1.ContainerStatus) {
	per := maxPodTerminationMessage
	if n > 0 {
		per /= n
	}
	// The states are shared with the runners: cut copies.
	cut := func(t **corev1.ContainerStateTerminated) {
		if *t != nil && len((*t).Message) > per {
			c := **t
			c.Message = c.Message[:per]
			*t = &c
		}
	}
	for _, l := range lists {
		for i := range l {
			cut(&l[i].State.Terminated)
			cut(&l[i].LastTerminationState.Terminated)
		}
	}
}
