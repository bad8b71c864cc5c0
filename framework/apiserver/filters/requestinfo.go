package filters

import (
	"context"
	"net/http"
	"strings"
)

// RequestInfo is what the URL and method say about a request, in the terms
// authorization and audit use.
type RequestInfo struct {
	// IsResourceRequest is true for /api/... and /apis/GROUP/VERSION/... resource
	// paths; everything else (discovery, /healthz, /openapi ...) is a non-resource
	// request identified by Path.
	IsResourceRequest bool
	Path              string
	// Verb is get, list, watch, create, update, patch, delete or deletecollection
	// for resource requests, the lower-cased HTTP method otherwise.
	Verb        string
	APIGroup    string
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
}

// NewRequestInfo parses r.
func NewRequestInfo(r *http.Request) *RequestInfo {
	ri := &RequestInfo{Path: r.URL.Path, Verb: lowerMethod(r.Method)}
	parts := splitPath(r.URL.Path)
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		ri.APIVersion = parts[1]
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		ri.APIGroup, ri.APIVersion = parts[1], parts[2]
		parts = parts[3:]
	default:
		return ri
	}
	watch := false
	if parts[0] == "watch" {
		watch = true
		parts = parts[1:]
		if len(parts) == 0 {
			return &RequestInfo{Path: r.URL.Path, Verb: lowerMethod(r.Method)}
		}
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		ri.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	if len(parts) > 3 {
		return &RequestInfo{Path: r.URL.Path, Verb: lowerMethod(r.Method)}
	}
	ri.IsResourceRequest = true
	ri.Resource = parts[0]
	if len(parts) > 1 {
		ri.Name = parts[1]
	}
	if len(parts) > 2 {
		ri.Subresource = parts[2]
	}
	if ri.Resource == "namespaces" && ri.Name != "" {
		ri.Namespace = ri.Name
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case watch || (ri.Subresource == "" && watchParam(r)):
			ri.Verb = "watch"
		case ri.Name == "":
			ri.Verb = "list"
		default:
			ri.Verb = "get"
		}
		if ri.Name == "" && (ri.Verb == "list" || ri.Verb == "watch") {
			// As Kubernetes: a list or watch of one name (fieldSelector
			// metadata.name=NAME) is authorized as that name, so RBAC's
			// resourceNames apply (informers of one object).
			ri.Name = selectedName(r.URL.Query().Get("fieldSelector"))
		}
	case http.MethodPost:
		ri.Verb = "create"
	case http.MethodPut:
		ri.Verb = "update"
	case http.MethodPatch:
		ri.Verb = "patch"
	case http.MethodDelete:
		if ri.Name == "" {
			ri.Verb = "deletecollection"
		} else {
			ri.Verb = "delete"
		}
	}
	return ri
}

// lowerMethod is strings.ToLower(method), without allocating for the usual
// methods.
func lowerMethod(method string) string {
	switch method {
	case http.MethodGet:
		return "get"
	case http.MethodPost:
		return "post"
	case http.MethodPut:
		return "put"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	case http.MethodHead:
		return "head"
	case http.MethodOptions:
		return "options"
	}
	return strings.ToLower(method)
}

// watchParam reports whether the query sets watch=true (or 1).
// selectedName is the name a field selector requires exactly
// (metadata.name=NAME or ==, among other terms), if it is a valid path
// segment; "" otherwise.
func selectedName(selector string) string {
	for _, term := range strings.Split(selector, ",") {
		key, value, ok := strings.Cut(term, "=")
		if !ok || strings.HasSuffix(key, "!") {
			continue
		}
		value = strings.TrimPrefix(value, "=")
		if strings.TrimSpace(key) != "metadata.name" {
			continue
		}
		value = strings.TrimSpace(value)
		if value == "" || value == "." || value == ".." || strings.ContainsAny(value, "/%") {
			return ""
		}
		return value
	}
	return ""
}

func watchParam(r *http.Request) bool {
	v := r.URL.Query().Get("watch")
	return v == "true" || v == "1"
}

func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// IsReadOnly reports whether the request changes nothing.
func (ri *RequestInfo) IsReadOnly() bool {
	switch ri.Verb {
	case "get", "list", "watch", "head", "options":
		return true
	}
	return false
}

// IsLongRunning reports requests that stream (watch, logs, exec, attach,
// port-forward, proxy); limits and timeouts do not apply to them.
func (ri *RequestInfo) IsLongRunning() bool {
	if ri.Verb == "watch" || ri.Verb == "proxy" {
		return true
	}
	switch ri.Subresource {
	case "log", "exec", "attach", "portforward", "proxy":
		return true
	}
	return false
}

type requestInfoKey struct{}

// WithRequestInfo returns ctx carrying ri.
func WithRequestInfo(ctx context.Context, ri *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, ri)
}

// RequestInfoFrom returns the request info ctx carries.
func RequestInfoFrom(ctx context.Context) (*RequestInfo, bool) {
	ri, ok := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return ri, ok && ri != nil
}

// WithRequestInfoFilter parses every request into a RequestInfo (unless the
// context carries one already) and stores it in the context.
func WithRequestInfoFilter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := RequestInfoFrom(r.Context()); !ok {
			r = r.WithContext(WithRequestInfo(r.Context(), NewRequestInfo(r)))
		}
		next.ServeHTTP(w, r)
	})
}
