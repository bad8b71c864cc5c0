package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// memStore is the part of storage.Interface the write path uses, in memory.
type memStore struct {
	storage.Interface
	mu   sync.Mutex
	rev  int64
	kvs  map[string]storage.KeyValue
	fail map[string]error // Create of these keys fails
}

func newMemStore() *memStore {
	return &memStore{kvs: map[string]storage.KeyValue{}, fail: map[string]error{}}
}

// List lists the keys under prefix (the server's watch caches list every
// watchable resource at start).
func (m *memStore) List(_ context.Context, prefix string, _ storage.ListOptions) (storage.ListResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	res := storage.ListResult{Revision: m.rev}
	for k, kv := range m.kvs {
		if strings.HasPrefix(k, prefix) {
			res.Items = append(res.Items, kv)
		}
	}
	return res, nil
}

// Watch delivers nothing until ctx ends: these tests do not watch.
func (m *memStore) Watch(ctx context.Context, _ string, _ int64) <-chan storage.Event {
	ch := make(chan storage.Event)
	go func() { <-ctx.Done(); close(ch) }()
	return ch
}

func (m *memStore) Get(_ context.Context, key string) (storage.KeyValue, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kv, ok := m.kvs[key]
	if !ok {
		return storage.KeyValue{}, storage.ErrNotFound
	}
	return kv, nil
}

func (m *memStore) Create(_ context.Context, key string, value []byte) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail[key]; err != nil {
		return 0, err
	}
	if _, ok := m.kvs[key]; ok {
		return 0, storage.ErrExists
	}
	m.rev++
	m.kvs[key] = storage.KeyValue{Key: key, Value: value, CreateRevision: m.rev, ModRevision: m.rev}
	return m.rev, nil
}

func (m *memStore) Update(_ context.Context, key string, value []byte, expected int64) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kv, ok := m.kvs[key]
	if !ok {
		return 0, storage.ErrNotFound
	}
	if expected != 0 && kv.ModRevision != expected {
		return 0, storage.ErrConflict
	}
	m.rev++
	kv.Value, kv.ModRevision = value, m.rev
	m.kvs[key] = kv
	return m.rev, nil
}

func (m *memStore) Delete(_ context.Context, key string, expected int64) (storage.KeyValue, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	kv, ok := m.kvs[key]
	if !ok {
		return storage.KeyValue{}, 0, storage.ErrNotFound
	}
	if expected != 0 && kv.ModRevision != expected {
		return storage.KeyValue{}, 0, storage.ErrConflict
	}
	m.rev++
	delete(m.kvs, key)
	return kv, m.rev, nil
}

// admitStrategy sets spec.slot on admission and records how writes end.
type admitStrategy struct {
	mu     sync.Mutex
	events []string
}

var (
	_ registry.Admitter   = (*admitStrategy)(nil)
	_ registry.DeleteHook = (*admitStrategy)(nil)
)

func (s *admitStrategy) record(e string) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *admitStrategy) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.events
	s.events = nil
	return out
}

func (s *admitStrategy) Canonicalize(obj map[string]any) (map[string]any, []string, field.ErrorList) {
	return obj, nil, nil
}

func (s *admitStrategy) ValidateCreate(context.Context, map[string]any) field.ErrorList { return nil }

func (s *admitStrategy) ValidateUpdate(context.Context, map[string]any, map[string]any) field.ErrorList {
	return nil
}

func (s *admitStrategy) admit(what string, obj map[string]any) (registry.Admission, error) {
	if api.NestedString(obj, "spec", "want") == "taken" {
		return registry.Admission{}, apierrors.NewInvalid(api.GroupKind{Group: "example.com", Kind: "Widget"},
			api.NestedString(obj, "metadata", "name"),
			field.ErrorList{field.Invalid(field.NewPath("spec", "want"), "taken", "provided slot is already allocated")})
	}
	slot := api.NestedString(obj, "spec", "want")
	if slot == "" {
		slot = "auto"
	}
	api.SetNestedField(obj, slot, "spec", "slot")
	s.record(what + " " + slot)
	return registry.Admission{
		Commit: func(ctx context.Context) {
			if ctx.Err() == nil {
				s.record("commit " + slot)
			}
		},
		Abort: func(context.Context) { s.record("abort " + slot) },
	}, nil
}

func (s *admitStrategy) AdmitCreate(_ context.Context, obj map[string]any) (registry.Admission, error) {
	return s.admit("create", obj)
}

func (s *admitStrategy) AdmitUpdate(_ context.Context, obj, old map[string]any) (registry.Admission, error) {
	if api.NestedString(obj, "spec", "want") == api.NestedString(old, "spec", "want") {
		api.SetNestedField(obj, api.NestedString(old, "spec", "slot"), "spec", "slot")
		return registry.Admission{}, nil
	}
	return s.admit("update", obj)
}

func (s *admitStrategy) Deleted(_ context.Context, obj map[string]any) {
	s.record("deleted " + api.NestedString(obj, "spec", "slot"))
}

func startAdmitServer(t *testing.T) (http.Handler, *memStore, *admitStrategy) {
	t.Helper()
	st := &admitStrategy{}
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Group: "example.com", Version: "v1"}, Resource: "widgets",
		Kind: "Widget", ListKind: "WidgetList", Singular: "widget", Strategy: st,
	})
	ms := newMemStore()
	srv, err := New(Options{Storage: ms, Registry: reg, Logger: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(t.Context())
	return srv.Handler(), ms, st
}

func do(t *testing.T, h http.Handler, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequestWithContext(t.Context(), method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := map[string]any{}
	if rec.Body.Len() > 0 {
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, rec.Body.String(), err)
		}
	}
	return rec.Code, out
}

func widget(name, want string, extra ...func(map[string]any)) map[string]any {
	w := map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{}}
	if want != "" {
		w["spec"].(map[string]any)["want"] = want
	}
	for _, f := range extra {
		f(w)
	}
	return w
}

func TestAdmitterAndDeleteHook(t *testing.T) {
	t.Parallel()
	h, ms, st := startAdmitServer(t)
	const base = "/apis/example.com/v1/widgets"

	// Create: admitted, stored with the admitted field, committed.
	code, out := do(t, h, http.MethodPost, base, widget("a", ""))
	if code != http.StatusCreated || api.NestedString(out, "spec", "slot") != "auto" {
		t.Fatalf("create: %d %v", code, out)
	}
	if diff := cmp.Diff([]string{"create auto", "commit auto"}, st.take()); diff != "" {
		t.Errorf("create events (-want +got):\n%s", diff)
	}
	kv, err := ms.Get(t.Context(), "/registry/example.com/widgets/a")
	if err != nil || !strings.Contains(string(kv.Value), `"slot":"auto"`) {
		t.Fatalf("stored %s, %v", kv.Value, err)
	}

	// Create of an existing name: admitted, then aborted.
	code, _ = do(t, h, http.MethodPost, base, widget("a", "s1"))
	if code != http.StatusConflict {
		t.Fatalf("second create: %d", code)
	}
	if diff := cmp.Diff([]string{"create s1", "abort s1"}, st.take()); diff != "" {
		t.Errorf("conflicting create events (-want +got):\n%s", diff)
	}

	// Storage failure: aborted, 500.
	ms.fail["/registry/example.com/widgets/broken"] = storage.ErrCompacted
	code, _ = do(t, h, http.MethodPost, base, widget("broken", "s2"))
	if code != http.StatusInternalServerError {
		t.Fatalf("failing create: %d", code)
	}
	if diff := cmp.Diff([]string{"create s2", "abort s2"}, st.take()); diff != "" {
		t.Errorf("failing create events (-want +got):\n%s", diff)
	}

	// Dry run: the response shows the admitted value, nothing is stored, aborted.
	code, out = do(t, h, http.MethodPost, base+"?dryRun=All", widget("dry", "s3"))
	if code != http.StatusCreated || api.NestedString(out, "spec", "slot") != "s3" {
		t.Fatalf("dry-run create: %d %v", code, out)
	}
	if _, err := ms.Get(t.Context(), "/registry/example.com/widgets/dry"); err == nil {
		t.Error("dry run stored the object")
	}
	if diff := cmp.Diff([]string{"create s3", "abort s3"}, st.take()); diff != "" {
		t.Errorf("dry-run events (-want +got):\n%s", diff)
	}

	// Refused admission: its API error, nothing stored.
	code, out = do(t, h, http.MethodPost, base, widget("b", "taken"))
	if code != http.StatusUnprocessableEntity ||
		out["message"] != `Widget.example.com "b" is invalid: spec.want: Invalid value: "taken": provided slot is already allocated` {
		t.Fatalf("refused create: %d %v", code, out)
	}
	if ev := st.take(); len(ev) != 0 {
		t.Errorf("refused create events: %v", ev)
	}

	// Update that changes the admitted field: admitted with the old object, committed.
	code, out = do(t, h, http.MethodPut, base+"/a", widget("a", "s4"))
	if code != http.StatusOK || api.NestedString(out, "spec", "slot") != "s4" {
		t.Fatalf("update: %d %v", code, out)
	}
	if diff := cmp.Diff([]string{"update s4", "commit s4"}, st.take()); diff != "" {
		t.Errorf("update events (-want +got):\n%s", diff)
	}

	// Update that stores nothing new: no commit.
	code, _ = do(t, h, http.MethodPut, base+"/a", widget("a", "s4", func(w map[string]any) {
		w["spec"].(map[string]any)["slot"] = "s4"
	}))
	if code != http.StatusOK {
		t.Fatalf("no-op update: %d", code)
	}
	if ev := st.take(); len(ev) != 0 {
		t.Errorf("no-op update events: %v", ev)
	}

	// Delete: the hook gets the last state.
	code, _ = do(t, h, http.MethodDelete, base+"/a", nil)
	if code != http.StatusOK {
		t.Fatalf("delete: %d", code)
	}
	if diff := cmp.Diff([]string{"deleted s4"}, st.take()); diff != "" {
		t.Errorf("delete events (-want +got):\n%s", diff)
	}

	// An update that removes the last finalizer of an object marked for
	// deletion deletes it: committed, then the hook.
	fin := func(w map[string]any) { w["metadata"].(map[string]any)["finalizers"] = []any{"example.com/hold"} }
	if code, _ := do(t, h, http.MethodPost, base, widget("c", "s5", fin)); code != http.StatusCreated {
		t.Fatalf("create c: %d", code)
	}
	if code, _ := do(t, h, http.MethodDelete, base+"/c", nil); code != http.StatusOK {
		t.Fatalf("mark c: %d", code)
	}
	st.take()
	code, _ = do(t, h, http.MethodPut, base+"/c", widget("c", "s6"))
	if code != http.StatusOK {
		t.Fatalf("finalize c: %d", code)
	}
	got := st.take()
	if !slices.Equal(got, []string{"update s6", "deleted s6", "commit s6"}) {
		t.Errorf("finalizing update events: %v", got)
	}
	if _, err := ms.Get(t.Context(), "/registry/example.com/widgets/c"); err == nil {
		t.Error("finalized object still stored")
	}
}

// uncomparableCtx is a context whose type == cannot compare.
type uncomparableCtx struct {
	context.Context
	tags []string
}

func TestSameContext(t *testing.T) {
	base := t.Context()
	type key struct{}
	other := context.WithValue(base, key{}, 1)
	for _, tc := range []struct {
		a, b context.Context
		want bool
	}{
		{base, base, true},
		{base, other, false},
		{uncomparableCtx{base, nil}, uncomparableCtx{base, nil}, false},
		{uncomparableCtx{base, nil}, base, false},
	} {
		if got := sameContext(tc.a, tc.b); got != tc.want {
			t.Errorf("sameContext(%T, %T) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
