package containerd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/containerd/errdefs"
	"google.golang.org/grpc"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// Container labels set by Start.
const (
	LabelPodUID       = "converge.dev/pod-uid"
	LabelPodNamespace = "converge.dev/pod-namespace"
	LabelPodName      = "converge.dev/pod-name"
	LabelContainer    = "converge.dev/container-name"
	LabelAttempt      = "converge.dev/attempt"
	LabelStartedAt    = "converge.dev/started-at"
)

// Runtime runs containers through containerd. Create it with New.
type Runtime struct {
	client      *client.Client
	dialer      *socketDialer
	address     string
	namespace   string
	snapshotter string
	runtime     string
	registries  Registries
	shimGroups  int

	// pullMu guards pulls, the pulls in flight by normalized reference and credentials (pullKey).
	pullMu sync.Mutex
	pulls  map[string]*pullCall

	// unpacked holds the manifest digests of images found unpacked into
	// the snapshotter (see unpack).
	unpacked sync.Map
	// unpacking holds the unpacks in flight by manifest digest, so that a
	// burst of starts of a new image unpacks it once; guarded by unpackMu.
	unpackMu  sync.Mutex
	unpacking map[string]*unpackCall
	// metas are the images' imageMeta by manifest digest (imagemeta.go).
	metas metas
	// lease is shared by container creations (imagemeta.go).
	lease startLease
	// bg counts background calls (background); Close waits for them.
	bg sync.WaitGroup

	// mu guards running. Never held across a containerd call.
	mu sync.Mutex
	// running holds the containers started by this Runtime whose task has not
	// been deleted; their exit is observed by a goroutine that flushes the log.
	running map[string]*container
	// closing is set by Close; guarded by mu.
	closing bool
}

var (
	_ cri.Runtime      = (*Runtime)(nil)
	_ cri.SpecFinisher = (*Runtime)(nil)
)

// New connects to containerd at opts.Address and picks the snapshotter. ctx
// bounds the connection checks only.
func New(ctx context.Context, opts Options) (*Runtime, error) {
	opts.complete()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	dialer, err := newSocketDialer(opts.Address)
	if err != nil {
		return nil, fmt.Errorf("connect to containerd: %w", err)
	}
	c, err := client.New(dialer.path,
		client.WithDefaultNamespace(opts.Namespace),
		client.WithDefaultRuntime(opts.Runtime),
		client.WithTimeout(5*time.Second),
		client.WithExtraDialOpts([]grpc.DialOption{grpc.WithContextDialer(dialer.dial)}))
	if err != nil {
		dialer.Close()
		return nil, fmt.Errorf("connect to containerd at %s: %w", opts.Address, err)
	}
	r := &Runtime{client: c, dialer: dialer, address: dialer.path, namespace: opts.Namespace, runtime: opts.Runtime,
		registries: opts.Registries, shimGroups: opts.ShimGroups, running: map[string]*container{}, pulls: map[string]*pullCall{}}
	ctx = r.nsCtx(ctx)
	if _, err := c.Version(ctx); err != nil {
		c.Close()
		dialer.Close()
		return nil, fmt.Errorf("connect to containerd at %s: %w", opts.Address, err)
	}
	r.snapshotter = opts.Snapshotter
	if r.snapshotter == "" {
		if r.snapshotter, err = pickSnapshotter(ctx, c); err != nil {
			c.Close()
			dialer.Close()
			return nil, err
		}
	}
	return r, nil
}

// pickSnapshotter returns overlayfs when the daemon loaded it, else native.
func pickSnapshotter(ctx context.Context, c *client.Client) (string, error) {
	resp, err := c.IntrospectionService().Plugins(ctx, `type=="io.containerd.snapshotter.v1"`)
	if err != nil {
		return "", fmt.Errorf("list containerd snapshotters: %w", err)
	}
	for _, p := range resp.Plugins {
		if p.ID == DefaultSnapshotter && p.InitErr == nil {
			return DefaultSnapshotter, nil
		}
	}
	return FallbackSnapshotter, nil
}

// Name returns "containerd".
func (r *Runtime) Name() string { return "containerd" }

// PrivateMounts is true: every container has its own root filesystem
// (cri.PrivateMounter).
func (r *Runtime) PrivateMounts() bool { return true }

// mountsAt reports whether one of mounts is at the container path p.
func mountsAt(mounts []cri.Mount, p string) bool {
	return slices.ContainsFunc(mounts, func(m cri.Mount) bool { return filepath.Clean(m.ContainerPath) == p })
}

// Address is containerd's socket.
func (r *Runtime) Address() string { return r.address }

// Snapshotter is the snapshotter images are unpacked into.
func (r *Runtime) Snapshotter() string { return r.snapshotter }

// Namespace is the containerd namespace the runtime works in.
func (r *Runtime) Namespace() string { return r.namespace }

// Client is the underlying containerd client (for image import); it stays
// owned by the Runtime.
func (r *Runtime) Client() *client.Client { return r.client }

// Close closes the connection to containerd. Containers keep running; their
// output is no longer captured.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.bg.Wait()
	err := r.client.Close()
	r.dialer.Close()
	if err != nil {
		return fmt.Errorf("close containerd client: %w", err)
	}
	return nil
}

// nsCtx puts the runtime's namespace into ctx.
func (r *Runtime) nsCtx(ctx context.Context) context.Context {
	return namespaces.WithNamespace(ctx, r.namespace)
}

// background runs f in a goroutine that Close waits for, or right away
// when the runtime is closing.
func (r *Runtime) background(f func()) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		f()
		return
	}
	r.bg.Add(1)
	r.mu.Unlock()
	go func() { defer r.bg.Done(); f() }()
}

func (r *Runtime) lookupRunning(id string) *container {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running[id]
}

// load returns the containerd container, or an error wrapping cri.ErrNotFound.
func (r *Runtime) load(ctx context.Context, id string) (client.Container, error) {
	c, err := r.client.LoadContainer(ctx, id)
	if errdefs.IsNotFound(err) {
		return nil, fmt.Errorf("container %s: %w", id, cri.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load container %s: %w", id, err)
	}
	return c, nil
}

// loadTask returns the container's task; (nil, nil) when it has none.
func loadTask(ctx context.Context, c client.Container) (client.Task, error) {
	t, err := c.Task(ctx, nil)
	if errdefs.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load task of %s: %w", c.ID(), err)
	}
	return t, nil
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b[:])
}

// isGone reports an error saying the process or task no longer exists.
func isGone(err error) bool {
	return errdefs.IsNotFound(err) || errors.Is(err, errdefs.ErrNotFound)
}
