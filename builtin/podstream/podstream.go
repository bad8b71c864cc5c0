package podstream

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/stream"
	"github.com/converge-dev/converge/builtin/podlog"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Kind names one of the streaming subresources.
type Kind string

// The streaming subresources.
const (
	Exec        Kind = "exec"
	Attach      Kind = "attach"
	PortForward Kind = "portforward"
)

// Options configure the subresources. NodeAddress is required.
type Options struct {
	// NodeAddress locates node agents.
	NodeAddress podlog.NodeAddressFunc
	// TLS, when set, is the client configuration for agents (HTTPS with the
	// API server's node client certificate); nil means plain TCP.
	TLS *tls.Config
	// DialTimeout bounds connecting to an agent and its answer to the
	// upgrade (default 30s).
	DialTimeout time.Duration
}

// Subresource is one of pods/exec, pods/attach and pods/portforward.
type Subresource struct {
	kind Kind
	opts Options
}

var _ registry.Subresource = (*Subresource)(nil)

// New returns the subresource kind.
func New(kind Kind, opts Options) (*Subresource, error) {
	if opts.NodeAddress == nil {
		return nil, errors.New("podstream: NodeAddress is required")
	}
	switch kind {
	case Exec, Attach, PortForward:
	default:
		return nil, fmt.Errorf("podstream: unknown subresource %q", kind)
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 30 * time.Second
	}
	return &Subresource{kind: kind, opts: opts}, nil
}

// Verbs implements registry.Subresource.
func (*Subresource) Verbs() []string { return []string{"create", "get"} }

// Kind implements registry.Subresource: PodExecOptions, PodAttachOptions or
// PodPortForwardOptions, as Kubernetes' discovery says.
func (s *Subresource) Kind() api.GroupVersionKind {
	kind := map[Kind]string{Exec: "PodExecOptions", Attach: "PodAttachOptions", PortForward: "PodPortForwardOptions"}[s.kind]
	return api.GroupVersionKind{Version: "v1", Kind: kind}
}

// Serve implements registry.Subresource.
func (s *Subresource) Serve(w http.ResponseWriter, r *http.Request, parent registry.Parent) error {
	gr := api.GroupResource{Resource: "pods/" + string(s.kind)}
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		return apierrors.NewMethodNotSupported(gr, r.Method)
	}
	ctx := r.Context()
	query := r.URL.Query()
	obj, err := parent.Get(ctx)
	if err != nil {
		return err
	}
	pod, err := registry.FromMap[corev1.Pod](obj)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("decode pod: %w", err))
	}
	path := "/portforward/" + url.PathEscape(pod.Namespace) + "/" + url.PathEscape(pod.Name)
	if s.kind != PortForward {
		if _, err := stream.ParseOptions(query, s.kind == Exec); err != nil {
			return err
		}
		container, err := podlog.PickContainer(pod, query.Get("container"))
		if err != nil {
			return err
		}
		query.Del("container")
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot exec into or attach to a container in a completed pod; current phase is %s", pod.Status.Phase))
		}
		path = "/" + string(s.kind) + "/" + url.PathEscape(pod.Namespace) + "/" + url.PathEscape(pod.Name) + "/" + url.PathEscape(container)
	}
	if pod.Spec.NodeName == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	host, port, err := s.opts.NodeAddress(ctx, pod.Spec.NodeName)
	if err != nil {
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			return err
		}
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s runs on node %s, whose agent serves no streams: %v", pod.Name, pod.Spec.NodeName, err))
	}
	target := &url.URL{Path: path, RawQuery: query.Encode()}
	return s.proxy(ctx, w, r, net.JoinHostPort(host, strconv.Itoa(port)), target)
}

// forwarded are the request headers passed to the agent.
var forwarded = []string{"Connection", "Upgrade", "X-Stream-Protocol-Version", "Sec-Websocket-Key", "Sec-Websocket-Version",
	"Sec-Websocket-Protocol", "Sec-Websocket-Extensions", "Origin", "User-Agent"}

// proxy sends the upgrade request to the agent at addr and, once it switched
// protocols, joins the two connections.
func (s *Subresource) proxy(ctx context.Context, w http.ResponseWriter, r *http.Request, addr string, target *url.URL) error {
	backend, err := s.dial(ctx, addr)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("connect to node agent %s: %w", addr, err))
	}
	req := &http.Request{Method: r.Method, URL: target, Host: addr, Header: http.Header{}, ProtoMajor: 1, ProtoMinor: 1}
	for _, h := range forwarded {
		if v := r.Header.Values(h); len(v) > 0 {
			req.Header[h] = v
		}
	}
	_ = backend.SetDeadline(time.Now().Add(s.opts.DialTimeout))
	br := bufio.NewReader(backend)
	if err := req.Write(backend); err != nil {
		backend.Close()
		return apierrors.NewInternalError(fmt.Errorf("send request to node agent %s: %w", addr, err))
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		backend.Close()
		return apierrors.NewInternalError(fmt.Errorf("read answer of node agent %s: %w", addr, err))
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer backend.Close()
		defer resp.Body.Close()
		return podlog.AgentError(resp)
	}
	_ = backend.SetDeadline(time.Time{})
	client, cbrw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		backend.Close()
		return apierrors.NewBadRequest(fmt.Sprintf("pods/%s needs an HTTP/1.1 connection that can be upgraded: %v", s.kind, err))
	}
	var head strings.Builder
	head.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	_ = resp.Header.Write(&head)
	head.WriteString("\r\n")
	if _, err := io.WriteString(client, head.String()); err != nil {
		client.Close()
		backend.Close()
		return nil
	}
	join(client, cbrw.Reader, backend, br)
	return nil
}

func (s *Subresource) dial(ctx context.Context, addr string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.DialTimeout)
	defer cancel()
	if s.opts.TLS == nil {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
	cfg := s.opts.TLS.Clone()
	cfg.NextProtos = []string{"http/1.1"}
	d := tls.Dialer{Config: cfg}
	return d.DialContext(ctx, "tcp", addr)
}

// join copies client ↔ backend (first what each side's reader buffered)
// until one direction ends, then closes both.
func join(client net.Conn, clientBuf *bufio.Reader, backend net.Conn, backendBuf *bufio.Reader) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			client.Close()
			backend.Close()
		})
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn, srcBuf *bufio.Reader) {
		defer func() {
			closeBoth()
			done <- struct{}{}
		}()
		if n := srcBuf.Buffered(); n > 0 {
			b, _ := srcBuf.Peek(n)
			if _, err := dst.Write(b); err != nil {
				return
			}
		}
		buf := make([]byte, 128<<10)
		_, _ = io.CopyBuffer(dst, src, buf)
	}
	go pipe(backend, client, clientBuf)
	go pipe(client, backend, backendBuf)
	<-done
	<-done
}

var _ registry.Connecter = (*Subresource)(nil)

// ConnectOptions implements registry.Connecter: the request's
// PodExecOptions, PodAttachOptions or PodPortForwardOptions, read from its
// query as Kubernetes decodes them (false booleans and empty fields left out),
// for CONNECT admission. A malformed value is a 400.
func (s *Subresource) ConnectOptions(r *http.Request) (map[string]any, error) {
	q := r.URL.Query()
	out := map[string]any{"apiVersion": "v1", "kind": s.Kind().Kind}
	if s.kind == PortForward {
		var ports []any
		for _, v := range q["ports"] {
			for _, p := range strings.Split(v, ",") {
				n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
				if err != nil {
					return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid port %q: %v", p, err))
				}
				ports = append(ports, int64(n))
			}
		}
		if len(ports) > 0 {
			out["ports"] = ports
		}
		return out, nil
	}
	for _, k := range []string{"stdin", "stdout", "stderr", "tty"} {
		v := q.Get(k)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: %v", v, k, err))
		}
		if b {
			out[k] = true
		}
	}
	if c := q.Get("container"); c != "" {
		out["container"] = c
	}
	if s.kind == Exec && len(q["command"]) > 0 {
		cmd := make([]any, len(q["command"]))
		for i, c := range q["command"] {
			cmd[i] = c
		}
		out["command"] = cmd
	}
	return out, nil
}
