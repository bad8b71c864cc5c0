package podlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	nodestream "github.com/converge-dev/converge/builtin/node/stream"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// NodeAddressFunc returns where the agent of a node serves container logs.
// API errors it returns (NotFound) reach the client unchanged.
type NodeAddressFunc func(ctx context.Context, nodeName string) (host string, port int, err error)

// Options configure the subresource. NodeAddress is required.
type Options struct {
	// NodeAddress locates node agents.
	NodeAddress NodeAddressFunc
	// Transport makes the requests to agents (default: a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
	// Scheme of the agent URLs (default "http").
	Scheme string
}

// Subresource is the pods/log registry.Subresource.
type Subresource struct {
	opts   Options
	client *http.Client
}

var _ registry.Subresource = (*Subresource)(nil)

// New returns the pods/log subresource.
func New(opts Options) (*Subresource, error) {
	if opts.NodeAddress == nil {
		return nil, errors.New("podlog: NodeAddress is required")
	}
	if opts.Transport == nil {
		opts.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if opts.Scheme == "" {
		opts.Scheme = "http"
	}
	// No overall timeout: a followed log lasts as long as the client wants.
	return &Subresource{opts: opts, client: &http.Client{Transport: opts.Transport}}, nil
}

// Verbs implements registry.Subresource.
func (*Subresource) Verbs() []string { return []string{"get"} }

// Kind implements registry.Subresource: discovery reports pods/log as kind Pod.
func (*Subresource) Kind() api.GroupVersionKind {
	return api.GroupVersionKind{Version: "v1", Kind: "Pod"}
}

var logResource = api.GroupResource{Resource: "pods/log"}

// Serve implements registry.Subresource.
func (s *Subresource) Serve(w http.ResponseWriter, r *http.Request, parent registry.Parent) error {
	if r.Method != http.MethodGet {
		return apierrors.NewMethodNotSupported(logResource, r.Method)
	}
	ctx := r.Context()
	opts, err := parseOptions(r.URL.Query(), parent.Name())
	if err != nil {
		return err
	}
	obj, err := parent.Get(ctx)
	if err != nil {
		return err
	}
	pod, err := registry.FromMap[corev1.Pod](obj)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("decode pod: %w", err))
	}
	container, err := PickContainer(pod, opts.Get("container"))
	if err != nil {
		return err
	}
	opts.Del("container")
	if pod.Spec.NodeName == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", pod.Name))
	}
	host, port, err := s.opts.NodeAddress(ctx, pod.Spec.NodeName)
	if err != nil {
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			return err
		}
		return apierrors.NewInternalError(fmt.Errorf("locate node %s: %w", pod.Spec.NodeName, err))
	}
	loc := url.URL{
		Scheme:   s.opts.Scheme,
		Host:     net.JoinHostPort(host, strconv.Itoa(port)),
		Path:     "/containerLogs/" + url.PathEscape(pod.Namespace) + "/" + url.PathEscape(pod.Name) + "/" + url.PathEscape(container),
		RawQuery: opts.Encode(),
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil // the client went away
		}
		return apierrors.NewInternalError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return AgentError(resp)
	}
	if nodestream.IsWebSocket(r) {
		streamWebSocket(ctx, w, r, resp.Body)
		return nil
	}
	stream(w, resp.Body, opts.Get("follow") == "true")
	return nil
}

// stream copies the agent's body to the client, flushing every chunk when
// following, until either side ends.
func stream(w http.ResponseWriter, body io.Reader, follow bool) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if follow {
		_ = rc.Flush() // kubectl starts printing once it has the headers
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if follow {
				if ferr := rc.Flush(); ferr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// AgentError turns an error answer of a node agent into a Status.
func AgentError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var st api.Status
	if json.Unmarshal(b, &st) == nil && st.Kind == "Status" && st.Code != 0 {
		return apierrors.FromStatus(st)
	}
	msg := strings.TrimSpace(string(b))
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return apierrors.FromStatus(api.Status{
		TypeMeta: api.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   api.StatusFailure, Code: int32(resp.StatusCode), Reason: reasonFor(resp.StatusCode), Message: msg,
	})
}

func reasonFor(code int) string {
	switch code {
	case http.StatusBadRequest:
		return apierrors.ReasonBadRequest
	case http.StatusUnauthorized:
		return apierrors.ReasonUnauthorized
	case http.StatusForbidden:
		return apierrors.ReasonForbidden
	case http.StatusNotFound:
		return apierrors.ReasonNotFound
	case http.StatusConflict:
		return apierrors.ReasonConflict
	case http.StatusTooManyRequests:
		return apierrors.ReasonTooManyRequests
	case http.StatusServiceUnavailable:
		return apierrors.ReasonServiceUnavailable
	case http.StatusGatewayTimeout:
		return apierrors.ReasonTimeout
	}
	return apierrors.ReasonInternalError
}

// PickContainer returns the requested container of pod, or its only one, with
// Kubernetes' messages (400) when none or an unknown one is named.
func PickContainer(pod *corev1.Pod, name string) (string, error) {
	if name == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		msg := fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names(pod.Spec.Containers))
		if len(pod.Spec.InitContainers) > 0 {
			msg += " or one of the init containers: " + names(pod.Spec.InitContainers)
		}
		return "", apierrors.NewBadRequest(msg)
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return name, nil
		}
	}
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return name, nil
		}
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if c.Name == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

func names(cs []corev1.Container) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return "[" + strings.Join(out, " ") + "]"
}

// parseOptions checks the PodLogOptions query parameters and returns the ones
// to pass on, canonical (booleans as "true"/"false"), plus "container".
func parseOptions(q url.Values, pod string) (url.Values, error) {
	out := url.Values{}
	if c := q.Get("container"); c != "" {
		out.Set("container", c)
	}
	for _, k := range []string{"follow", "previous", "timestamps"} {
		if v := q.Get(k); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: %v", v, k, err))
			}
			if b {
				out.Set(k, "true")
			}
		}
	}
	var errs field.ErrorList
	ints := map[string]int64{"tailLines": 0, "sinceSeconds": 1, "limitBytes": 1} // minimum values
	for _, k := range []string{"tailLines", "sinceSeconds", "limitBytes"} {
		v := q.Get(k)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: %v", v, k, err))
		}
		if n < ints[k] {
			msg := "must be greater than 0"
			if ints[k] == 0 {
				msg = "must be greater than or equal to 0"
			}
			errs = append(errs, field.Invalid(field.NewPath(k), n, msg))
			continue
		}
		out.Set(k, strconv.FormatInt(n, 10))
	}
	if v := q.Get("sinceTime"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for sinceTime: %v", v, err))
		}
		out.Set("sinceTime", t.UTC().Format(time.RFC3339))
	}
	if out.Has("sinceTime") && q.Get("sinceSeconds") != "" {
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(api.GroupKind{Kind: "PodLogOptions"}, pod, errs)
	}
	return out, nil
}

// NodeGetter is the part of storage.Interface NodeAddressFromStore uses.
type NodeGetter interface {
	Get(ctx context.Context, key string) (storage.KeyValue, error)
}

// NodeAddressFromStore locates node agents from the Nodes in store (keys
// /registry/core/nodes/NAME, as the API server stores them).
func NodeAddressFromStore(store NodeGetter) NodeAddressFunc {
	return func(ctx context.Context, name string) (string, int, error) {
		kv, err := store.Get(ctx, "/registry/core/nodes/"+name)
		if errors.Is(err, storage.ErrNotFound) {
			return "", 0, apierrors.NewNotFound(api.GroupResource{Resource: "nodes"}, name)
		}
		if err != nil {
			return "", 0, fmt.Errorf("read node %s: %w", name, err)
		}
		var node corev1.Node
		if err := json.Unmarshal(kv.Value, &node); err != nil {
			return "", 0, fmt.Errorf("decode node %s: %w", name, err)
		}
		return NodeAddress(&node)
	}
}

// NodeAddress returns the agent address of node: its InternalIP (else
// Hostname, else ExternalIP) and its kubelet endpoint port.
func NodeAddress(node *corev1.Node) (string, int, error) {
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port == 0 {
		return "", 0, fmt.Errorf("node %s reports no kubelet endpoint port", node.Name)
	}
	for _, typ := range []corev1.NodeAddressType{corev1.NodeInternalIP, corev1.NodeHostName, corev1.NodeExternalIP} {
		for _, a := range node.Status.Addresses {
			if a.Type == typ && a.Address != "" {
				return a.Address, port, nil
			}
		}
	}
	return "", 0, fmt.Errorf("node %s reports no address", node.Name)
}
