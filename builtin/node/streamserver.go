package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/builtin/node/logs"
	"github.com/converge-dev/converge/builtin/node/stream"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

// streamRoutes adds the kubelet's streaming endpoints (GET and POST):
// /exec/{ns}/{pod}/{container}, /attach/{ns}/{pod}/{container} and
// /portforward/{ns}/{pod}. Package stream speaks the protocols.
func (a *Agent) streamRoutes(mux *http.ServeMux) {
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		mux.HandleFunc(m+" /exec/{namespace}/{pod}/{container}", a.serveExec)
		mux.HandleFunc(m+" /attach/{namespace}/{pod}/{container}", a.serveAttach)
		mux.HandleFunc(m+" /portforward/{namespace}/{pod}", a.servePortForward)
	}
}

func (a *Agent) serveExec(w http.ResponseWriter, r *http.Request) {
	opts, err := stream.ParseOptions(r.URL.Query(), true)
	if err != nil {
		stream.WriteError(w, err)
		return
	}
	ex, ok := a.rt.(cri.StreamExecer)
	if !ok {
		stream.WriteError(w, a.unsupported("exec"))
		return
	}
	_, id, err := a.runningContainer(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"))
	if err != nil {
		stream.WriteError(w, err)
		return
	}
	a.log.V(1).Info("Exec", "pod", r.PathValue("namespace")+"/"+r.PathValue("pod"), "container", r.PathValue("container"),
		"command", opts.Command, "tty", opts.TTY, "upgrade", r.Header.Get("Upgrade"))
	stream.ServeRemoteCommand(w, r, opts, stream.Config{}, func(ctx context.Context, s cri.Streams) (int, error) {
		return ex.ExecStream(ctx, id, opts.Command, s)
	})
}

// serveAttach joins the client to the container's terminal when it runs on
// one (tty: true on a cri.TTYAttacher runtime). Otherwise it streams what
// the container writes from now on (read from its log, so it works on
// every runtime) until it exits, and the client's input to the container's
// stdin where the runtime keeps it open (cri.StdinAttacher, containers with
// stdin: true).
func (a *Agent) serveAttach(w http.ResponseWriter, r *http.Request) {
	opts, err := stream.ParseOptions(r.URL.Query(), false)
	if err != nil {
		stream.WriteError(w, err)
		return
	}
	ns, podName, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	cr, id, err := a.runningContainer(ns, podName, name)
	if err != nil {
		stream.WriteError(w, err)
		return
	}
	attacher, _ := a.rt.(cri.StdinAttacher)
	if opts.Stdin && (attacher == nil || !cr.c.Stdin) {
		msg := fmt.Sprintf("attach with stdin: container %s does not set stdin: true", name)
		if attacher == nil {
			msg = fmt.Sprintf("attach with stdin is not supported by the %s runtime: it does not keep a container's stdin open; attach without -i", a.rt.Name())
		}
		stream.WriteError(w, apierrors.NewBadRequest(msg))
		return
	}
	if tty, ok := a.rt.(cri.TTYAttacher); ok && tty.HasTTY(id) {
		// A container on a terminal: the session gets the terminal itself.
		stream.ServeRemoteCommand(w, r, opts, stream.Config{}, func(ctx context.Context, s cri.Streams) (int, error) {
			return 0, tty.AttachTTY(ctx, id, s)
		})
		return
	}
	cr.mu.Lock()
	path := cr.logPath(cr.attempt)
	cr.mu.Unlock()
	running := func() bool {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		return cr.running && cr.id == id
	}
	stream.ServeRemoteCommand(w, r, opts, stream.Config{}, func(ctx context.Context, s cri.Streams) (int, error) {
		since := time.Now() // what the container writes from now on, input answered included
		if s.Stdin != nil {
			go func() {
				if err := attacher.AttachStdin(ctx, id, s.Stdin); err != nil {
					a.log.V(1).Info("Attaching stdin failed", "pod", ns+"/"+podName, "container", name, "error", err.Error())
				}
			}()
		}
		out := s.Stdout
		if out == nil {
			out = s.Stderr
		}
		if out == nil {
			out = io.Discard
		}
		if err := logs.Write(ctx, out, path, logs.Options{Follow: true, SinceTime: &since}, running); err != nil {
			return 0, fmt.Errorf("attach to container %s: %w", name, err)
		}
		return 0, nil
	})
}

// servePortForward forwards to the pod's ports: pods share the host's network
// here, so the agent dials the pod IP, then loopback.
func (a *Agent) servePortForward(w http.ResponseWriter, r *http.Request) {
	ns, podName := r.PathValue("namespace"), r.PathValue("pod")
	if _, ok := a.rt.(cri.StreamExecer); !ok {
		stream.WriteError(w, a.unsupported("port forwarding"))
		return
	}
	pw := a.worker(ns, podName)
	if pw == nil {
		stream.WriteError(w, a.notRunning(ns, podName))
		return
	}
	stream.ServePortForward(w, r, ns+"/"+podName, stream.Config{}, func(ctx context.Context, port uint16) (net.Conn, error) {
		return dialPod(ctx, pw.ip(), port)
	})
}

// dialPod connects to port on the pod IP, then on 127.0.0.1 (a program may
// listen on either).
func dialPod(ctx context.Context, podIP string, port uint16) (net.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	hosts := []string{"127.0.0.1"}
	if podIP != "" && podIP != "127.0.0.1" {
		hosts = []string{podIP, "127.0.0.1"}
	}
	var errs []error
	for _, host := range hosts {
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// runningContainer finds a running container of a pod on this node.
func (a *Agent) runningContainer(ns, podName, name string) (*containerRunner, string, error) {
	pw := a.worker(ns, podName)
	if pw == nil {
		return nil, "", a.notRunning(ns, podName)
	}
	for _, c := range pw.runners() {
		if c.c.Name != name {
			continue
		}
		c.mu.Lock()
		id, running := c.id, c.running
		c.mu.Unlock()
		if !running || id == "" {
			return nil, "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not running in pod %s/%s", name, ns, podName))
		}
		return c, id, nil
	}
	return nil, "", apierrors.NewNotFound(api.GroupResource{Resource: "containers"}, name)
}

func (a *Agent) notRunning(ns, podName string) error {
	return apierrors.NewNotFound(api.GroupResource{Resource: "pods"}, fmt.Sprintf("%s/%s (not running on node %s)", ns, podName, a.opts.NodeName))
}

func (a *Agent) unsupported(what string) error {
	return apierrors.NewBadRequest(fmt.Sprintf("%s is not supported on node %s: its %s runtime runs no real processes", what, a.opts.NodeName, a.rt.Name()))
}
