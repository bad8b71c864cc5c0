package podproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// podPrefix and nodePrefix are the storage prefixes of Pods and Nodes.
const (
	podPrefix  = "/registry/core/pods/"
	nodePrefix = "/registry/core/nodes/"
)

// PodGetter is the part of storage.Interface the subresource uses: pods are
// read by the name inside NAME, which the parent (the whole NAME) cannot do,
// and their nodes for the pod CIDRs.
type PodGetter interface {
	Get(ctx context.Context, key string) (storage.KeyValue, error)
}

// Subresource is the pods/proxy registry.Subresource.
type Subresource struct {
	store     PodGetter
	transport http.RoundTripper
}

var _ registry.Subresource = (*Subresource)(nil)

// New returns the pods/proxy subresource reading pods from store; transport
// makes the requests to pods (nil: a clone of http.DefaultTransport).
func New(store PodGetter, transport http.RoundTripper) (*Subresource, error) {
	if store == nil {
		return nil, errors.New("podproxy: a pod store is required")
	}
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &Subresource{store: store, transport: transport}, nil
}

// Verbs implements registry.Subresource.
func (*Subresource) Verbs() []string {
	return []string{"create", "delete", "get", "patch", "update"}
}

// Kind implements registry.Subresource: discovery reports pods/proxy as
// kind PodProxyOptions, as Kubernetes does.
func (*Subresource) Kind() api.GroupVersionKind {
	return api.GroupVersionKind{Version: "v1", Kind: "PodProxyOptions"}
}

var proxyResource = api.GroupResource{Resource: "pods"}

// Serve implements registry.Subresource.
func (s *Subresource) Serve(w http.ResponseWriter, r *http.Request, parent registry.Parent) error {
	scheme, name, port, ok := SplitSchemeNamePort(parent.Name())
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid pod request %q", parent.Name()))
	}
	pod, err := s.pod(r.Context(), parent.Namespace(), name)
	if err != nil {
		return err
	}
	loc, err := location(pod, scheme, port)
	if err != nil {
		return err
	}
	if err := s.checkHostLocal(r.Context(), pod, loc); err != nil {
		return err
	}
	loc.Path = tail(r.URL.Path, parent.Name())
	loc.RawQuery = r.URL.RawQuery
	var proxyErr error
	rp := &httputil.ReverseProxy{
		Transport: s.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = loc
			pr.Out.Host = loc.Host
			for _, h := range []string{"Authorization", "Impersonate-User", "Impersonate-Group", "Impersonate-Uid"} {
				pr.Out.Header.Del(h)
			}
			for k := range pr.Out.Header {
				if strings.HasPrefix(k, "Impersonate-Extra-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				proxyErr = apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err))
			}
		},
	}
	rp.ServeHTTP(w, r)
	return proxyErr
}

// pod reads pod ns/name.
func (s *Subresource) pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	pod, found, err := read[corev1.Pod](ctx, s.store, podPrefix+ns+"/"+name)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apierrors.NewNotFound(proxyResource, name)
	}
	return pod, nil
}

// read decodes the stored object at key; found is false when there is none.
func read[T any](ctx context.Context, store PodGetter, key string) (obj *T, found bool, err error) {
	kv, err := store.Get(ctx, key)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, apierrors.NewInternalError(fmt.Errorf("read %s: %w", key, err))
	}
	obj = new(T)
	if err := json.Unmarshal(kv.Value, obj); err != nil {
		return nil, false, apierrors.NewInternalError(fmt.Errorf("decode %s: %w", key, err))
	}
	return obj, true, nil
}

// checkHostLocal refuses a loopback or link-local target unless it lies in
// the pod CIDRs of the node the pod runs on (the process runtime gives pods
// loopback addresses from its node's range). Anything else on the host's
// loopback (the API server, etcd, the node agent) or a link-local address (a
// cloud metadata service) is never reachable through pods/proxy, whatever
// IP a pod's status claims.
func (s *Subresource) checkHostLocal(ctx context.Context, pod *corev1.Pod, loc *url.URL) error {
	ip := net.ParseIP(loc.Hostname())
	if ip == nil || !(ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast()) {
		return nil
	}
	denied := apierrors.NewBadRequest("address not allowed")
	if pod.Spec.NodeName == "" {
		return denied
	}
	node, found, err := read[corev1.Node](ctx, s.store, nodePrefix+pod.Spec.NodeName)
	if err != nil {
		return err
	}
	if found && inCIDRs(ip, append([]string{node.Spec.PodCIDR}, node.Spec.PodCIDRs...)) {
		return nil
	}
	return denied
}

// inCIDRs reports whether ip lies in one of cidrs (unparsable ones ignored).
func inCIDRs(ip net.IP, cidrs []string) bool {
	for _, c := range cidrs {
		if _, n, err := net.ParseCIDR(c); err == nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// location is where pod answers: its IP, and port or else its first
// containerPort.
func location(pod *corev1.Pod, scheme, port string) (*url.URL, error) {
	if port == "" {
		for _, c := range pod.Spec.Containers {
			if len(c.Ports) > 0 {
				port = strconv.Itoa(int(c.Ports[0].ContainerPort))
				break
			}
		}
	}
	podIP := pod.Status.PodIP
	if len(pod.Status.PodIPs) > 0 {
		podIP = pod.Status.PodIPs[0].IP
	}
	ip := net.ParseIP(podIP)
	if ip == nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("pod %s has no IP address", pod.Name))
	}
	if ip.IsUnspecified() || ip.IsMulticast() {
		return nil, apierrors.NewBadRequest("address not allowed")
	}
	if scheme == "" {
		scheme = "http"
	}
	loc := &url.URL{Scheme: scheme, Host: podIP}
	if port != "" {
		loc.Host = net.JoinHostPort(podIP, port)
	}
	return loc, nil
}

// tail is the part of path after ".../NAME/proxy", "/" when empty.
func tail(path, name string) string {
	marker := "/" + name + "/proxy"
	i := strings.Index(path, marker)
	if i < 0 {
		return "/"
	}
	rest := path[i+len(marker):]
	if rest == "" || rest[0] != '/' {
		return "/" + rest
	}
	return rest
}

// SplitSchemeNamePort splits "name", "name:port" and "scheme:name:port"
// (scheme "http" or "https"); ok is false for anything else.
func SplitSchemeNamePort(id string) (scheme, name, port string, ok bool) {
	parts := strings.Split(id, ":")
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		name, port = parts[0], parts[1]
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
		if scheme != "http" && scheme != "https" {
			return "", "", "", false
		}
	default:
		return "", "", "", false
	}
	if name == "" {
		return "", "", "", false
	}
	return scheme, name, port, true
}
