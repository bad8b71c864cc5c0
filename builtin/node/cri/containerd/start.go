package containerd

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/core/containers"
	"github.com/containerd/containerd/v2/pkg/cio"
	"github.com/containerd/containerd/v2/pkg/oci"
	"github.com/containerd/errdefs"
	"github.com/containerd/typeurl/v2"
	"github.com/go-logr/logr"
	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/image"
)

// cfsPeriod is the CFS period the CPU quota is expressed over (100ms, as the kubelet).
const cfsPeriod = 100_000

// Start creates and starts a container; see the package comment for how spec
// maps to the OCI spec.
func (r *Runtime) Start(ctx context.Context, spec cri.ContainerSpec) (string, error) {
	ctx = r.nsCtx(ctx)
	log := logr.FromContextOrDiscard(ctx)
	what := spec.PodNamespace + "/" + spec.PodName + "/" + spec.Name
	if err := validate(spec); err != nil {
		return "", fmt.Errorf("start container %s: %w: %w", what, cri.ErrInvalidSpec, err)
	}
	img, err := r.image(ctx, spec.Image)
	if err != nil {
		return "", fmt.Errorf("start container %s: %w", what, err)
	}
	if err := r.unpack(ctx, img); err != nil {
		return "", fmt.Errorf("start container %s: %w", what, err)
	}
	meta, err := r.meta(ctx, img)
	if err != nil {
		return "", fmt.Errorf("start container %s: %w", what, err)
	}
	var pidNS string
	if spec.TargetID != "" {
		// kubectl debug --target: the target container's PID namespace.
		if pidNS, err = r.targetPIDNamespace(spec.TargetID); err != nil {
			return "", fmt.Errorf("start container %s: %w", what, err)
		}
	}
	id := newID()
	// The root filesystem does not depend on the spec: it is prepared
	// while the pod's sandbox may still be set up (spec.Finish).
	err = r.prepare(ctx, id, meta)
	if errdefs.IsNotFound(err) {
		// The image's snapshots went (an image removed by another client and
		// imported again), or the shared lease did: unpack and prepare once more.
		r.forget(img)
		if err = r.unpack(ctx, img); err == nil {
			err = r.prepare(ctx, id, meta)
		}
	}
	if err != nil {
		return "", fmt.Errorf("start container %s: prepare root filesystem: %w", what, err)
	}
	if spec.Finish != nil {
		if err = spec.Finish(ctx, &spec); err == nil {
			if verr := validate(spec); verr != nil {
				err = fmt.Errorf("%w: %w", cri.ErrInvalidSpec, verr)
			}
		}
		if err != nil {
			r.removeSnapshot(ctx, id)
			return "", fmt.Errorf("start container %s: %w", what, err)
		}
	}
	opts := specOpts(metaImage{Image: img, m: meta}, spec)
	if g := r.shimGroup(spec.PodUID); g != "" {
		opts = append(opts, oci.WithAnnotations(map[string]string{shimGroupAnnotation: g}))
	}
	if pidNS != "" {
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.PIDNamespace, Path: pidNS}))
	}
	cont, ociSpec, err := r.newContainer(ctx, id, img, spec, opts)
	if errdefs.IsNotFound(err) {
		// The shared lease went: create once more on a new one.
		r.dropLease()
		cont, ociSpec, err = r.newContainer(ctx, id, img, spec, opts)
	}
	if err != nil {
		r.removeSnapshot(ctx, id)
		return "", fmt.Errorf("start container %s: create: %w", what, err)
	}
	// From here on, a failure removes what was created.
	cleanup := func(t client.Task) {
		dctx := context.WithoutCancel(ctx)
		if t != nil {
			if _, err := t.Delete(dctx, client.WithProcessKill); err != nil && !isGone(err) {
				log.Error(err, "Delete task after failed start", "container", id)
			}
		}
		if err := cont.Delete(dctx, client.WithSnapshotCleanup); err != nil && !isGone(err) {
			log.Error(err, "Delete container after failed start", "container", id)
		}
	}
	logs, err := openLog(spec.LogPath)
	if err != nil {
		cleanup(nil)
		return "", fmt.Errorf("start container %s: %w", what, err)
	}
	stdout, stderr := logs.stream("stdout"), logs.stream("stderr")
	var stdinR *io.PipeReader
	var stdinW *io.PipeWriter
	if spec.Stdin { // cio copies the pipe into the task's stdin FIFO (attach.go)
		stdinR, stdinW = io.Pipe()
	}
	var task client.Task // set below, before anything uses the console
	stdin := newStdin(ctx, func() client.Task { return task }, stdinW, spec.StdinOnce)
	streams := cio.WithStreams(readerOrNil(stdinR), stdout, stderr)
	var console *cri.Console
	if spec.TTY {
		// The shim's terminal: one output, logged as stdout and passed
		// to the attach sessions (tty.go).
		console = newConsole(ctx, func() client.Task { return task }, stdin)
		streams = cio.WithStreams(readerOrNil(stdinR), io.MultiWriter(stdout, console), nil)
	}
	task, err = cont.NewTask(ctx, cio.NewCreator(streams, withTerminal(spec.TTY)))
	if err != nil {
		logs.close()
		closePipe(stdinW)
		cleanup(nil)
		return "", fmt.Errorf("start container %s: create task: %w", what, classifyStartErr(err))
	}
	// The wait must outlive the request: it is how the exit is observed.
	exitCh, err := task.Wait(context.WithoutCancel(ctx))
	if err != nil {
		logs.close()
		closePipe(stdinW)
		cleanup(task)
		return "", fmt.Errorf("start container %s: wait task: %w", what, err)
	}
	started := time.Now() // before Start: a quick process may exit before Start returns
	if err := task.Start(ctx); err != nil {
		logs.close()
		closePipe(stdinW)
		cleanup(task)
		return "", fmt.Errorf("start container %s: start task: %w", what, classifyStartErr(err))
	}
	c := &container{
		id:         id,
		stdin:      stdin,
		console:    console,
		task:       task,
		pid:        int(task.Pid()),
		startedAt:  started,
		cgroupPath: cgroupsPath(ociSpec),
		done:       make(chan struct{}),
	}
	r.mu.Lock()
	r.running[id] = c
	r.mu.Unlock()
	go c.watch(context.WithoutCancel(ctx), exitCh, logs, stdout, stderr)

	// Recorded for a Runtime that finds the container after an agent
	// restart; not waited for (Close waits): a start returns one database
	// write sooner.
	r.background(func() {
		if _, err := cont.SetLabels(context.WithoutCancel(ctx), map[string]string{LabelStartedAt: started.UTC().Format(time.RFC3339Nano)}); err != nil {
			log.V(1).Info("Could not label container with its start time", "container", id, "error", err.Error())
		}
	})
	log.V(1).Info("Started container", "container", id, "pod", spec.PodNamespace+"/"+spec.PodName, "name", spec.Name, "image", img.Name(), "pid", c.pid)
	return id, nil
}

// shimGroupAnnotation makes containerd's runc shim serve the containers
// whose specs carry the same value from one shim process.
const shimGroupAnnotation = "io.containerd.runc.v2.group"

// shimGroup is the shim group of a pod's containers ("" without
// Options.ShimGroups).
func (r *Runtime) shimGroup(podUID string) string {
	if r.shimGroups <= 0 || podUID == "" {
		return ""
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(podUID))
	return fmt.Sprintf("converge-shim-%d", h.Sum32()%uint32(r.shimGroups))
}

// validate checks what the agent must always fill in.
func validate(spec cri.ContainerSpec) error {
	var errs []error
	if spec.Name == "" {
		errs = append(errs, errors.New("no container name"))
	}
	if spec.Image == "" {
		errs = append(errs, errors.New("no image"))
	}
	if spec.LogPath == "" {
		errs = append(errs, errors.New("no log path"))
	}
	if spec.Resources.CPUMilli < 0 || spec.Resources.MemoryBytes < 0 {
		errs = append(errs, errors.New("negative resource limit"))
	}
	for _, m := range spec.Mounts {
		if !filepath.IsAbs(m.HostPath) || !filepath.IsAbs(m.ContainerPath) {
			errs = append(errs, fmt.Errorf("mount %s:%s: paths must be absolute", m.HostPath, m.ContainerPath))
		}
	}
	return errors.Join(errs...)
}

// classifyStartErr marks failures caused by the spec itself (a missing
// executable, a bad working directory) as cri.ErrInvalidSpec.
func classifyStartErr(err error) error {
	msg := err.Error()
	for _, s := range []string{"executable file not found", "no such file or directory", "permission denied", "not a directory"} {
		if strings.Contains(msg, s) {
			return fmt.Errorf("%w: %w", cri.ErrInvalidSpec, err)
		}
	}
	return err
}

// prepare creates the container's writable snapshot, id, over the image's
// unpacked layers (what client.WithNewSnapshot does, without reading the
// image's manifest and the snapshotter's capabilities again), under the
// runtime's shared lease (withLease) until the container holds it.
func (r *Runtime) prepare(ctx context.Context, id string, m *imageMeta) error {
	ctx, err := r.withLease(ctx)
	if err != nil {
		return err
	}
	_, err = r.client.SnapshotService(r.snapshotter).Prepare(ctx, id, m.chainID)
	return err
}

// removeSnapshot removes the snapshot prepare made for a container that was
// not created (the lease would keep it until it expires).
func (r *Runtime) removeSnapshot(ctx context.Context, id string) {
	if err := r.client.SnapshotService(r.snapshotter).Remove(context.WithoutCancel(ctx), id); err != nil && !errdefs.IsNotFound(err) {
		logr.FromContextOrDiscard(ctx).Error(err, "Remove the snapshot of a container that was not created", "container", id)
	}
}

// forget drops what the runtime remembers of img's unpacked snapshots and
// the shared lease (either found gone).
func (r *Runtime) forget(img client.Image) {
	r.unpacked.Delete(img.Target().Digest.String())
	r.dropLease()
}

// newContainer creates container id of img on its prepared snapshot (id)
// and returns it with its spec. It shares the runtime's lease (withLease)
// instead of the one per container client.NewContainer makes, and keeps the
// spec it generates instead of reading it back.
func (r *Runtime) newContainer(ctx context.Context, id string, img client.Image, spec cri.ContainerSpec, opts []oci.SpecOpts) (client.Container, *oci.Spec, error) {
	ctx, err := r.withLease(ctx)
	if err != nil {
		return nil, nil, err
	}
	var s *oci.Spec
	withSnapshot := func(_ context.Context, _ *client.Client, ctr *containers.Container) error {
		ctr.Snapshotter, ctr.SnapshotKey = r.snapshotter, id
		return nil
	}
	withSpec := func(ctx context.Context, c *client.Client, ctr *containers.Container) error {
		var err error
		if s, err = oci.GenerateSpec(ctx, c, ctr, opts...); err != nil {
			return err
		}
		ctr.Spec, err = typeurl.MarshalAny(s)
		return err
	}
	cont, err := r.client.NewContainer(ctx, id,
		client.WithImage(img),
		withSnapshot,
		client.WithRuntime(r.runtime, nil),
		client.WithContainerLabels(map[string]string{
			LabelPodUID:       spec.PodUID,
			LabelPodNamespace: spec.PodNamespace,
			LabelPodName:      spec.PodName,
			LabelContainer:    spec.Name,
			LabelAttempt:      strconv.Itoa(spec.Attempt),
		}),
		withSpec,
	)
	if err != nil {
		return nil, nil, err
	}
	return cont, s, nil
}

// FinishesSpecs marks the Runtime as a cri.SpecFinisher: Start calls
// ContainerSpec.Finish after the root filesystem is prepared.
func (r *Runtime) FinishesSpecs() {}

// image finds a local image by reference, normalized name, or digest.
func (r *Runtime) image(ctx context.Context, ref string) (client.Image, error) {
	candidates := []string{ref}
	if n := image.Normalize(ref); n != ref {
		candidates = append(candidates, n)
	}
	for _, name := range candidates {
		img, err := r.client.GetImage(ctx, name)
		if err == nil {
			return img, nil
		}
		if !errdefs.IsNotFound(err) {
			return nil, fmt.Errorf("look up image %q: %w", ref, err)
		}
	}
	if _, dgst, ok := strings.Cut(ref, "@"); ok {
		imgs, err := r.client.ListImages(ctx, "target.digest=="+dgst)
		if err != nil {
			return nil, fmt.Errorf("look up image %q by digest: %w", ref, err)
		}
		if len(imgs) > 0 {
			return imgs[0], nil
		}
	}
	return nil, fmt.Errorf("image %q (pull it, or import it with `converge image import`): %w", ref, cri.ErrImageNotPresent)
}

// unpack makes sure img is unpacked into the runtime's snapshotter. An image
// (by its manifest digest) found unpacked is remembered: checking costs
// several containerd calls per container start, and the image's snapshots
// stay as long as it does (Start forgets it when they are found gone).
// Starts of an image being unpacked wait for that unpack instead of
// unpacking it too.
func (r *Runtime) unpack(ctx context.Context, img client.Image) error {
	key := img.Target().Digest.String()
	if _, ok := r.unpacked.Load(key); ok {
		return nil
	}
	r.unpackMu.Lock()
	if c, ok := r.unpacking[key]; ok {
		r.unpackMu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return fmt.Errorf("wait for the unpack of image %s: %w", img.Name(), ctx.Err())
		}
	}
	if r.unpacking == nil {
		r.unpacking = map[string]*unpackCall{}
	}
	c := &unpackCall{done: make(chan struct{})}
	r.unpacking[key] = c
	r.unpackMu.Unlock()
	c.err = r.doUnpack(ctx, img)
	if c.err == nil {
		r.unpacked.Store(key, struct{}{})
	}
	r.unpackMu.Lock()
	delete(r.unpacking, key)
	r.unpackMu.Unlock()
	close(c.done)
	return c.err
}

// unpackCall is an unpack in flight; err is set before done is closed.
type unpackCall struct {
	done chan struct{}
	err  error
}

func (r *Runtime) doUnpack(ctx context.Context, img client.Image) error {
	ok, err := img.IsUnpacked(ctx, r.snapshotter)
	if err != nil {
		return fmt.Errorf("check image %s is unpacked: %w", img.Name(), err)
	}
	if !ok {
		if err := img.Unpack(ctx, r.snapshotter); err != nil && !errdefs.IsAlreadyExists(err) {
			return fmt.Errorf("unpack image %s into %s: %w", img.Name(), r.snapshotter, err)
		}
	}
	return nil
}

// specOpts maps a ContainerSpec onto the image's default spec.
func specOpts(img oci.Image, spec cri.ContainerSpec) []oci.SpecOpts {
	opts := []oci.SpecOpts{
		// ImageArgs (used when Args is empty) replace the image's Cmd after its Entrypoint.
		oci.WithImageConfigArgs(img, spec.ImageArgs),
	}
	// The agent mounts each pod's own resolv.conf (dnsPolicy); the host's
	// only when it did not.
	if !mountsAt(spec.Mounts, "/etc/resolv.conf") {
		opts = append(opts, oci.WithHostResolvconf)
	}
	if spec.NetNSPath != "" {
		opts = append(opts, oci.WithLinuxNamespace(specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: spec.NetNSPath}))
	} else {
		opts = append(opts, oci.WithHostNamespace(specs.NetworkNamespace))
	}
	if !slices.ContainsFunc(spec.Mounts, func(m cri.Mount) bool { return m.ContainerPath == "/etc/hosts" }) {
		opts = append(opts, oci.WithHostHostsFile) // else the agent's per-pod hosts file
	}
	if spec.TTY {
		opts = append(opts, oci.WithTTY)
	}
	if spec.ReadOnlyRootfs {
		opts = append(opts, oci.WithRootFSReadonly())
	}
	opts = append(opts, privilegesOpt(spec))
	if len(spec.Sysctls) > 0 {
		opts = append(opts, withSysctls(spec.Sysctls))
	}
	h := spec.Hostname
	if h == "" {
		h = cri.TruncateHostname(spec.PodName)
	}
	if h != "" {
		opts = append(opts, oci.WithHostname(h))
	}
	if len(spec.Args) > 0 {
		opts = append(opts, oci.WithProcessArgs(spec.Args...))
	}
	if len(spec.Env) > 0 {
		opts = append(opts, oci.WithEnv(spec.Env))
	}
	if spec.WorkingDir != "" {
		opts = append(opts, oci.WithProcessCwd(spec.WorkingDir))
	}
	if len(spec.Mounts) > 0 {
		var ms []specs.Mount
		for _, m := range spec.Mounts {
			o := []string{"rbind", "rprivate", "rw"}
			if m.ReadOnly {
				o[2] = "ro"
			}
			ms = append(ms, specs.Mount{Destination: m.ContainerPath, Type: "bind", Source: m.HostPath, Options: o})
		}
		opts = append(opts, oci.WithMounts(ms))
	}
	switch {
	case spec.RunAsUser != nil && spec.RunAsGroup != nil:
		opts = append(opts, oci.WithUIDGID(uint32(*spec.RunAsUser), uint32(*spec.RunAsGroup)))
	case spec.RunAsUser != nil:
		opts = append(opts, oci.WithUserID(uint32(*spec.RunAsUser)))
	case spec.RunAsGroup != nil:
		opts = append(opts, withGID(uint32(*spec.RunAsGroup)))
	}
	if m := spec.Resources.MemoryBytes; m > 0 {
		opts = append(opts, oci.WithMemoryLimit(uint64(m)))
	}
	if c := spec.Resources.CPUMilli; c > 0 {
		quota := c * cfsPeriod / 1000
		quota = max(quota, 1000) // the kernel's minimum quota is 1ms
		opts = append(opts, oci.WithCPUCFS(quota, cfsPeriod))
	}
	return opts
}

// privilegesOpt sets no_new_privs only when the spec asks for it:
// containerd's default spec sets it always, where the kubelet lets a
// container's setuid binaries work unless allowPrivilegeEscalation is false.
func privilegesOpt(spec cri.ContainerSpec) oci.SpecOpts {
	if spec.NoNewPrivileges {
		return oci.WithNoNewPrivileges
	}
	return oci.WithNewPrivileges
}

// withSysctls sets the pod's sysctls, which the OCI runtime writes in the
// container's namespaces before it starts the process.
func withSysctls(sysctls map[string]string) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Linux == nil {
			s.Linux = &specs.Linux{}
		}
		if s.Linux.Sysctl == nil {
			s.Linux.Sysctl = map[string]string{}
		}
		maps.Copy(s.Linux.Sysctl, sysctls)
		return nil
	}
}

// withGID sets the primary group, keeping the image's user.
func withGID(gid uint32) oci.SpecOpts {
	return func(_ context.Context, _ oci.Client, _ *containers.Container, s *oci.Spec) error {
		if s.Process == nil {
			s.Process = &specs.Process{}
		}
		s.Process.User.GID = gid
		return nil
	}
}

// hostname is the pod name cut to a valid host name (63 bytes).
func cgroupsPath(s *oci.Spec) string {
	if s == nil || s.Linux == nil {
		return ""
	}
	return s.Linux.CgroupsPath
}

// openLog opens (appending) the log file, creating its directory.
func openLog(path string) (*logFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	return newLogFile(f), nil
}
