package podproxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// Storage prefixes of the objects the subresources read.
const (
	podPrefix       = "/registry/core/pods/"
	nodePrefix      = "/registry/core/nodes/"
	servicePrefix   = "/registry/core/services/"
	endpointsPrefix = "/registry/core/endpoints/"
)

// Getter is the part of storage.Interface the subresources use: objects are
// read by the name inside NAME, which the parent (the whole NAME) cannot do.
type Getter interface {
	Get(ctx context.Context, key string) (storage.KeyValue, error)
}

// Options configure New.
type Options struct {
	// Store holds the pods, services, endpoints and nodes (required).
	Store Getter
	// Transport makes the requests to pods, service endpoints and node ports
	// other than the agent's (nil: a clone of http.DefaultTransport that does
	// not verify HTTPS targets, as Kubernetes' proxy transport).
	Transport http.RoundTripper
	// NodeScheme and NodeTransport reach node agents' servers on their
	// kubelet endpoint port (nil NodeTransport: "http" and Transport).
	NodeScheme    string
	NodeTransport http.RoundTripper
}

// Proxies are the pods/proxy, services/proxy and nodes/proxy subresources.
type Proxies struct {
	o Options
}

// New returns the proxy subresources configured by o.
func New(o Options) (*Proxies, error) {
	if o.Store == nil {
		return nil, errors.New("podproxy: a store is required")
	}
	if o.Transport == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // as Kubernetes' proxy transport: pods' certificates are their own
		o.Transport = tr
	}
	if o.NodeTransport == nil {
		o.NodeScheme, o.NodeTransport = "http", o.Transport
	}
	if o.NodeScheme == "" {
		o.NodeScheme = "http"
	}
	return &Proxies{o: o}, nil
}

// Pods is the pods/proxy subresource.
func (p *Proxies) Pods() registry.Subresource {
	return &subresource{kind: "PodProxyOptions", resource: "pod", resolve: p.podTarget}
}

// Services is the services/proxy subresource.
func (p *Proxies) Services() registry.Subresource {
	return &subresource{kind: "ServiceProxyOptions", resource: "service", resolve: p.serviceTarget}
}

// Nodes is the nodes/proxy subresource.
func (p *Proxies) Nodes() registry.Subresource {
	return &subresource{kind: "NodeProxyOptions", resource: "node", resolve: p.nodeTarget}
}

// target is where one proxied request goes: scheme and host of url, through
// transport.
type target struct {
	url       *url.URL
	transport http.RoundTripper
}

// subresource is one resource's proxy: resolve finds the target of
// "scheme:name:port" in namespace ns ("" for nodes).
type subresource struct {
	kind     string
	resource string
	resolve  func(ctx context.Context, ns, scheme, name, port string) (*target, error)
}

var _ registry.Subresource = (*subresource)(nil)

// Verbs implements registry.Subresource.
func (*subresource) Verbs() []string {
	return []string{"create", "delete", "get", "patch", "update"}
}

// Kind implements registry.Subresource: discovery reports the proxy
// subresources as kind PodProxyOptions, ServiceProxyOptions and
// NodeProxyOptions, as Kubernetes does.
func (s *subresource) Kind() api.GroupVersionKind {
	return api.GroupVersionKind{Version: "v1", Kind: s.kind}
}

// credentialHeaders are the client's credentials, never passed on.
var credentialHeaders = []string{"Authorization", "Impersonate-User", "Impersonate-Group", "Impersonate-Uid"}

// Serve implements registry.Subresource.
func (s *subresource) Serve(w http.ResponseWriter, r *http.Request, parent registry.Parent) error {
	scheme, name, port, ok := SplitSchemeNamePort(parent.Name())
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("invalid %s request %q", s.resource, parent.Name()))
	}
	t, err := s.resolve(r.Context(), parent.Namespace(), scheme, name, port)
	if err != nil {
		return err
	}
	prefix, rest, ok := splitProxyPath(r.URL.Path, parent.Name())
	if !ok && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// As Kubernetes: .../proxy goes to .../proxy/, so that the target's
		// relative links resolve below the proxy.
		loc := r.URL.Path + "/"
		if r.URL.RawQuery != "" {
			loc += "?" + r.URL.RawQuery
		}
		w.Header().Set("Location", loc)
		w.WriteHeader(http.StatusMovedPermanently)
		return nil
	}
	loc := *t.url
	loc.Path = rest
	loc.RawQuery = r.URL.RawQuery
	rw := rewriter{prefix: prefix, targetHost: loc.Host}
	var proxyErr error
	rp := &httputil.ReverseProxy{
		Transport: t.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = &loc
			pr.Out.Host = loc.Host
			for _, h := range credentialHeaders {
				pr.Out.Header.Del(h)
			}
			for k := range pr.Out.Header {
				if strings.HasPrefix(k, "Impersonate-Extra-") {
					pr.Out.Header.Del(k)
				}
			}
		},
		ModifyResponse: rw.response,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				proxyErr = apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err))
			}
		},
	}
	rp.ServeHTTP(w, r)
	return proxyErr
}

// read decodes the stored object at key; found is false when there is none.
func read[T any](ctx context.Context, store Getter, key string) (obj *T, found bool, err error) {
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

// mustRead is read with a missing object as NotFound of resource.
func mustRead[T any](ctx context.Context, store Getter, key, resource, name string) (*T, error) {
	obj, found, err := read[T](ctx, store, key)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, apierrors.NewNotFound(api.GroupResource{Resource: resource}, name)
	}
	return obj, nil
}

// splitProxyPath splits path at ".../NAME/proxy": prefix is up to and
// including "/proxy", rest what follows ("/" when nothing does); ok is false
// when nothing, not even a "/", follows.
func splitProxyPath(path, name string) (prefix, rest string, ok bool) {
	marker := "/" + name + "/proxy"
	i := strings.Index(path, marker)
	if i < 0 {
		return path, "/", false
	}
	prefix, rest = path[:i+len(marker)], path[i+len(marker):]
	if rest == "" {
		return prefix, "/", false
	}
	if rest[0] != '/' {
		rest = "/" + rest
	}
	return prefix, rest, true
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
