package quota

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// Server is what ServerStore needs of the API server it runs in
// (*apiserver.Server).
type Server interface {
	// Handler serves the API.
	Handler() http.Handler
	// CachedObjects returns the stored JSON of a resource's objects from the
	// watch cache.
	CachedObjects(ctx context.Context, gvr api.GroupVersionResource, namespace string) ([][]byte, int64, error)
}

// quotaWriter is the identity the API server charges quotas as.
var quotaWriter = &filters.User{Name: "system:apiserver", Groups: []string{filters.GroupMasters}}

// ServerStore is a Store inside an API server: it lists quotas from the
// watch cache and reads and writes them through the server's own handler
// (validation, resourceVersion checks and watch events as for any client).
type ServerStore struct {
	server func() Server
}

// NewServerStore returns a Store of the API server server returns (nil
// until the server exists: the admission chain is built before it).
func NewServerStore(server func() Server) *ServerStore { return &ServerStore{server: server} }

var _ Store = (*ServerStore)(nil)

var quotasGVR = api.GroupVersionResource{Version: "v1", Resource: "resourcequotas"}

func (s *ServerStore) get() (Server, error) {
	srv := s.server()
	if srv == nil {
		return nil, ErrNoStore
	}
	return srv, nil
}

// List implements Store from the watch cache.
func (s *ServerStore) List(ctx context.Context, namespace string) ([]*corev1.ResourceQuota, error) {
	srv, err := s.get()
	if err != nil {
		return nil, err
	}
	items, _, err := srv.CachedObjects(ctx, quotasGVR, namespace)
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.ResourceQuota, 0, len(items))
	for _, raw := range items {
		q := &corev1.ResourceQuota{}
		if err := json.Unmarshal(raw, q); err != nil {
			return nil, fmt.Errorf("decode resource quota: %w", err)
		}
		out = append(out, q)
	}
	return out, nil
}

// Get implements Store with a GET through the handler.
func (s *ServerStore) Get(ctx context.Context, namespace, name string) (*corev1.ResourceQuota, error) {
	return s.do(ctx, http.MethodGet, quotaPath(namespace, name), nil)
}

// UpdateStatus implements Store with a PUT of the status subresource.
func (s *ServerStore) UpdateStatus(ctx context.Context, q *corev1.ResourceQuota) (*corev1.ResourceQuota, error) {
	body, err := json.Marshal(q)
	if err != nil {
		return nil, fmt.Errorf("encode resource quota: %w", err)
	}
	return s.do(ctx, http.MethodPut, quotaPath(q.Namespace, q.Name)+"/status", body)
}

func quotaPath(namespace, name string) string {
	return "/api/v1/namespaces/" + url.PathEscape(namespace) + "/resourcequotas/" + url.PathEscape(name)
}

func (s *ServerStore) do(ctx context.Context, method, path string, body []byte) (*corev1.ResourceQuota, error) {
	srv, err := s.get()
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequestWithContext(filters.WithUser(ctx, quotaWriter), method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code >= 300 {
		st := api.Status{}
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Code == 0 {
			return nil, fmt.Errorf("%s %s: %d %s", method, path, rec.Code, rec.Body.String())
		}
		return nil, apierrors.FromStatus(st)
	}
	q := &corev1.ResourceQuota{}
	if err := json.Unmarshal(rec.Body.Bytes(), q); err != nil {
		return nil, fmt.Errorf("decode resource quota: %w", err)
	}
	return q, nil
}
