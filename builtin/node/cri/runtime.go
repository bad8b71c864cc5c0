package cri

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrNotFound: no container with that ID.
	ErrNotFound = errors.New("runtime: container not found")
	// ErrImageNotPresent: the image is not available locally and cannot be pulled
	// (no registry is reachable); the agent reports ErrImageNeverPull-style status.
	ErrImageNotPresent = errors.New("runtime: image not present")
	// ErrInvalidSpec: the container cannot be run as specified (e.g. the process
	// runtime got no command); the agent reports CreateContainerError.
	ErrInvalidSpec = errors.New("runtime: invalid container spec")
)

// Mount makes a host directory or file (a per-pod volume directory the agent
// prepared) visible at ContainerPath.
type Mount struct {
	HostPath      string
	ContainerPath string
	ReadOnly      bool
}

// Resources are the limits applied to a container where the runtime can (cgroups).
type Resources struct {
	// CPUMilli is the CPU limit in millicores (0: none).
	CPUMilli int64
	// MemoryBytes is the memory limit (0: none).
	MemoryBytes int64
}

// ContainerSpec is everything a runtime needs to run one container. The agent
// resolves Kubernetes semantics (command/args with $(VAR) expansion, env from
// ConfigMaps/Secrets/fieldRefs, volume directories) before calling the runtime.
type ContainerSpec struct {
	// PodUID, PodNamespace and PodName identify the pod; Name the container.
	PodUID, PodNamespace, PodName, Name string
	// Hostname is the container's host name, as the kubelet gives it (the
	// pod's spec.hostname, else its name, cut to 63 bytes; its fully
	// qualified name with setHostnameAsFQDN). Empty means the pod's name.
	Hostname string
	// Image is the container image reference (recorded by the process runtime).
	Image string
	// Args is the full argv (entrypoint included) when the pod sets command:
	// command then args, $(VAR)-expanded. Empty means the image's entrypoint
	// (containerd) or ErrInvalidSpec (process).
	Args []string
	// ImageArgs, used only when Args is empty, are the pod's args
	// ($(VAR)-expanded): they replace the image's Cmd after its Entrypoint, as
	// Kubernetes does when a container sets args but not command. Empty means
	// the image's Cmd.
	ImageArgs []string
	// Env holds KEY=VALUE pairs.
	Env []string
	// WorkingDir is the working directory ("" = runtime default).
	WorkingDir string
	Mounts     []Mount
	// LogPath is the file the runtime appends stdout and stderr to, one line per
	// write in the CRI log format: "<RFC3339Nano> stdout|stderr F <line>" (lines
	// over 16 KiB split into "P" parts). It must be opened with O_APPEND: the
	// agent rotates it by copying then truncating. The runtime creates the file
	// when missing and never removes it.
	LogPath string
	// PodIP is the pod's IP (the process runtime binds nothing itself; it is
	// exported as POD_IP by the agent).
	PodIP string
	// NetNSPath, when set, is the pod's network namespace (package podnet):
	// the container joins it, so the containers of one pod share localhost
	// and the pod IP. Empty means the host's network (the process runtime,
	// hostNetwork pods). Runtimes without namespaces ignore it.
	NetNSPath string
	// RunAsUser and RunAsGroup select the user when set (root only).
	RunAsUser, RunAsGroup *int64
	// ReadOnlyRootfs makes the container's root filesystem read-only
	// (securityContext.readOnlyRootFilesystem); its Mounts keep their own
	// mode. A runtime that cannot returns ErrInvalidSpec.
	ReadOnlyRootfs bool
	// NoNewPrivileges keeps the process and its children from gaining
	// privileges (setuid and setgid binaries, file capabilities: the
	// kernel's no_new_privs), for securityContext.allowPrivilegeEscalation
	// false; otherwise they may, as under the kubelet. Runtimes without
	// containers ignore it.
	NoNewPrivileges bool
	// Sysctls are the pod's kernel parameters (securityContext.sysctls, by
	// their dotted names), set in the container's own namespaces (network,
	// IPC) where the runtime gives it some; the process runtime's containers
	// share the host's, so it ignores them.
	Sysctls   map[string]string
	Resources Resources
	// Attempt counts restarts of this container (0 for the first run).
	Attempt int
	// Stdin keeps the container's stdin open for attach (StdinAttacher);
	// with StdinOnce it closes when the first attach session's input ends.
	Stdin, StdinOnce bool
	// TTY runs the container on a pseudo-terminal (stdin, stdout and stderr
	// are the terminal; its output is logged as stdout) where the runtime
	// can; TTYAttacher attaches to it.
	TTY bool
	// TargetID, for an ephemeral container (kubectl debug --target), is the
	// running container whose PID namespace it joins where the runtime gives
	// containers their own; empty means the container's usual namespaces.
	TargetID string
	// Finish, when set, completes the spec once the pod's sandbox is ready:
	// the agent sets up the pod's network while the container is prepared,
	// and Finish waits for it, then fills in what depends on it (PodIP, the
	// POD_IP variable, the /etc/hosts mount). A runtime that implements
	// SpecFinisher calls it in Start after the work the spec does not decide
	// (image lookup, root filesystem), so that work overlaps the network's
	// setup; for other runtimes the agent calls it before Start. An error
	// fails the start (the runtime removes what it prepared).
	Finish func(ctx context.Context, spec *ContainerSpec) error `json:"-"`
}

// SpecFinisher is implemented by runtimes whose Start calls
// ContainerSpec.Finish itself (see there).
type SpecFinisher interface {
	// FinishesSpecs marks the runtime; it does nothing.
	FinishesSpecs()
}

// State is a container's lifecycle state.
type State string

// Container states.
const (
	StateCreated State = "Created"
	StateRunning State = "Running"
	StateExited  State = "Exited"
	StateUnknown State = "Unknown"
)

// ContainerStatus is what a runtime knows about a container.
type ContainerStatus struct {
	ID         string
	State      State
	ExitCode   int
	StartedAt  time.Time
	FinishedAt time.Time
	// Reason explains an exit when known: "OOMKilled", "Error", "Completed".
	Reason string
	// PID of the container's main process when it runs on this host (0 otherwise).
	PID int
}

// Runtime runs containers. Implementations are safe for concurrent use.
type Runtime interface {
	// Name is the runtime's name ("process", "containerd", "simulated").
	Name() string
	// Start creates and starts a container and returns its ID.
	Start(ctx context.Context, spec ContainerSpec) (string, error)
	// Status reports a container's state (ErrNotFound for an unknown ID).
	Status(ctx context.Context, id string) (ContainerStatus, error)
	// Wait blocks until the container exits or ctx ends and returns its status.
	Wait(ctx context.Context, id string) (ContainerStatus, error)
	// Stop sends SIGTERM, waits up to grace, then SIGKILL; stopping an exited
	// container is a no-op.
	Stop(ctx context.Context, id string, grace time.Duration) error
	// Remove deletes a stopped container's resources.
	Remove(ctx context.Context, id string) error
	// Exec runs a command inside a running container (exec probes) and returns
	// its exit code and combined output.
	Exec(ctx context.Context, id string, cmd []string) (int, []byte, error)
}

// PrivateMounter is implemented by runtimes that can say whether a Mount stays
// private to the container (its own mount namespace or root filesystem)
// rather than changing the host (the process runtime without namespaces makes
// mounts symlinks on the host). The agent mounts files over paths the host
// uses, such as the pod's /etc/resolv.conf, only when PrivateMounts is true;
// runtimes that do not implement it get no such mounts.
type PrivateMounter interface {
	PrivateMounts() bool
}

// ContainerInfo is a container a Lister knows: the spec it was started with
// and its current status.
type ContainerInfo struct {
	Spec   ContainerSpec
	Status ContainerStatus
}

// Lister is implemented by runtimes whose containers outlive the agent (the
// process runtime with a StateDir). List returns every container the runtime
// knows, including those started by an earlier agent that the runtime adopted
// on start-up, so a restarted agent re-adopts them instead of starting
// duplicates or leaving them orphaned. A container that exited while no agent
// watched it has Reason ReasonStatusUnknown.
type Lister interface {
	List(ctx context.Context) ([]ContainerInfo, error)
}

// ReasonStatusUnknown is the Reason of a container whose exit status was lost
// (it exited while no agent was its parent); its ExitCode is 137, as the
// kubelet reports such containers.
const ReasonStatusUnknown = "ContainerStatusUnknown"

// TruncateHostname cuts a host name to 63 bytes, as the kubelet does (a DNS
// label's and the kernel's limit), without a trailing '-' or '.'.
func TruncateHostname(h string) string {
	if len(h) > 63 {
		h = strings.TrimRight(h[:63], "-.")
	}
	return h
}
