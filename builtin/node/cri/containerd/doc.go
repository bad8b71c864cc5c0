// Package containerd is the node agent's runtime for real containers, through
// containerd's Go client (containerd 1.6+ with runc). It implements
// cri.Runtime.
//
// Start never pulls: it looks the image up by its reference, then by its
// normalized name ("hello" → "docker.io/library/hello:latest"), then by digest
// for "name@sha256:…" references, and fails with an error wrapping
// cri.ErrImageNotPresent when it is absent; it unpacks an image into the
// runtime's snapshotter on first use. Images come from `converge image
// import` (package image) or from registries through cri.ImageService, which
// the agent calls before Start according to the pod's imagePullPolicy.
//
// Pulls (pull.go) use containerd's client with its Docker registry resolver
// and unpack into the snapshotter. Concurrent pulls of one normalized
// reference share a single pull, which runs until it ends or every caller
// gave up. Registries (registry.go, the shape of k3s's registries.yaml) give
// mirrors (tried in order, then the registry itself), logins and TLS per
// host. A registry on a loopback address (127.0.0.0/8, ::1, localhost) is
// reached over plain HTTP straight away, with no HTTPS attempt, unless the
// configuration gives it a tls entry; every other registry over HTTPS.
// Credentials passed to a pull are used for the registry host they name
// (Docker Hub's aliases index.docker.io and registry-1.docker.io are
// docker.io), else the configured login; containerd's authorizer answers
// both Basic and Bearer (token server) challenges. Errors keep the resolver's
// words: "…: not found", "401 Unauthorized", "authorization failed: no basic
// auth credentials", "insufficient_scope: authorization failed" (an anonymous
// token), "connect: connection refused". Image IDs are config
// digests; RemoveImage deletes synchronously so containerd collects unused
// content and snapshots before it returns; ImageFsUsage reports the
// filesystem of containerd's content store. Push sends a local image to a
// registry (`converge image push`).
//
// Each Start creates a new container with a random ID (restarts are new
// containers: the agent passes Attempt and a fresh log path), labelled with the
// pod and container names. The OCI spec comes from the image config, then:
// Args replace the whole argv (entrypoint included) when given, Env is merged
// over the image's environment, WorkingDir, bind mounts, the user
// (RunAsUser/RunAsGroup), the cgroup limits (memory limit, CPU CFS quota over a
// 100ms period), a read-only root filesystem (ReadOnlyRootfs) and the
// hostname (spec.Hostname, else the pod name). Without Args, ImageArgs (the
// pod's args without a command) replace the image's Cmd after its Entrypoint. Containers get new ipc, mnt,
// pid and uts namespaces. With spec.NetNSPath (the pod's network namespace,
// set up by the agent through CNI, package podnet) the container joins that
// namespace, so the containers of one pod share localhost and the pod IP;
// without it (hostNetwork pods) it shares the host's network namespace. A
// mount at /etc/hosts (the agent's per-pod hosts file) replaces the host's
// /etc/hosts, which is used otherwise; /etc/resolv.conf is the host's.
//
// With TTY the process runs on a terminal the shim allocates: its one output
// is logged as stdout and passed to AttachTTY sessions (cri.Console, tty.go),
// whose input goes to the task's stdin and sizes to task.Resize. TargetID
// (kubectl debug --target) joins the PID namespace of that running
// container (/proc/<pid>/ns/pid) instead of a new one.
//
// Output goes to spec.LogPath in the CRI log format, one line per record:
// "<RFC3339Nano UTC> stdout|stderr F|P <line>" ("P" marks a piece of a line
// longer than 16 KiB). containerd hands stdout and stderr over separate FIFOs;
// one goroutine per stream converts and appends them. When the process exits,
// the log is flushed before Wait returns and before Status reports Exited.
//
// Status reports Reason "OOMKilled" when the container's memory cgroup recorded
// an OOM kill (cgroup v1 memory.oom_control or v2 memory.events, read before the
// task is deleted), else "Completed" for exit code 0 and "Error" otherwise.
//
// Stop sends SIGTERM, waits up to the grace period, then SIGKILLs every process
// of the container. Remove kills what still runs and deletes the task, the
// container and its snapshot. A container whose task has exited keeps its exit
// status until Remove.
//
// Pods share runc shims (Options.ShimGroups, by default two per CPU): a
// container's spec carries the io.containerd.runc.v2.group annotation of its
// pod's group, so a start runs the shim's start command, which finds the
// group's shim running, instead of a new shim daemon per container (a Go
// process's start-up and one more exec per container). A shim that dies
// takes the tasks of its group's pods with it.
//
// State lives in containerd: a Runtime created after an agent restart finds the
// containers, their status and their exit codes (log capture of containers
// started by an earlier process is lost, since their FIFOs had no reader).
// A Runtime is safe for concurrent use.
package containerd
