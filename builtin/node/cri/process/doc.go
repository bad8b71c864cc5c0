// Package process is the runtime that runs containers as host processes, the
// default of `converge up`. The contract, in full in docs/runtimes.md:
//
//   - Args (the pod's command and args, $(VAR)-expanded by the agent) is the
//     argv; Args[0] is looked up on the host's PATH. An empty Args is
//     ErrInvalidSpec ("the process runtime runs `command`; image X has no local
//     entrypoint"). Image is recorded and reported, never pulled or unpacked.
//     The exception is a pause image (registry.k8s.io/pause:3.10, any
//     */pause:*; IsPauseImage) without a command: it runs as a process that
//     only waits, this binary re-executed (pause.go), which exits 0 on SIGTERM
//     or SIGINT.
//   - Every container is its own process group (Setpgid). As root, and when the
//     kernel allows it (probed once in New), it also gets its own PID namespace
//     (it is PID 1 there, so an unhandled SIGTERM is ignored exactly as in a
//     container) and its own mount namespace in which each Mount is bind-mounted
//     at ContainerPath (read-only when asked); missing mount points are created
//     on the host and removed again when still empty once the container
//     exited and no other container mounts on them. Without root,
//     mounts are symlinks at ContainerPath (read-only is not enforced), so
//     PrivateMounts (cri.PrivateMounter) is false and the agent mounts no pod
//     resolv.conf over the host's /etc/resolv.conf.
//   - RunAsUser/RunAsGroup set the process credentials (root only).
//   - ReadOnlyRootfs remounts / read-only in the container's mount namespace
//     (mounts under it keep their modes); without namespaces it is
//     ErrInvalidSpec.
//   - Resources become cgroup v1 limits (memory.limit_in_bytes,
//     cpu.cfs_quota_us) in <own cgroup>/converge/<id> where the hierarchy is
//     writable; best effort. OOM kills are reported as Reason "OOMKilled".
//   - stdout and stderr are appended to LogPath (opened O_APPEND, so the agent
//     may rotate it by copy-and-truncate) as CRI lines; lines over 16 KiB are
//     split into "P" parts.
//   - Exit codes: the process's status, or 128+signal when it was killed.
//   - Exec and ExecStream (kubectl exec; stdin, stdout, stderr, or a pty
//     resized as the client says) run a host command with the container's env,
//     working dir and user, in its mount and PID namespaces when it has them.
//   - A container with Stdin reads a pipe that AttachStdin (kubectl attach -i)
//     writes to; StdinOnce closes it when the first attach's input ends.
//   - A container with TTY runs on a pty (its own session, the pty its
//     controlling terminal) whose master the runtime holds: read as stdout into
//     the log and to AttachTTY sessions (cri.Console), written by their input,
//     resized as they say; StdinOnce types ^D when the first session's input
//     ends. It has no FIFOs, so it does not outlive the agent.
//   - TargetID (kubectl debug --target) forks the container inside the
//     target's PID namespace instead of a new one, when containers get
//     namespaces; its execs join that namespace too.
//   - With Options.StateDir, containers outlive the agent: each one's record
//     (spec, PID, process start time from /proc against PID reuse, exit status)
//     is kept there and its output goes through named pipes there that the
//     container holds open read-write (no SIGPIPE while no agent reads). A new
//     runtime on the same StateDir adopts live containers (same PID and start
//     time) and reports dead ones as exited (ContainerStatusUnknown, 137, when
//     the exit was not observed); List (cri.Lister) returns them all.
//
// The network is the host's: the agent gives each pod a loopback IP and exports
// it as POD_IP; programs bind it themselves.
package process
