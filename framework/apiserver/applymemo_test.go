package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/apiserver/filters"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// memoFixture is a server whose admission chain counts the updates it
// validates: an apply answered from the memo validates nothing.
type memoFixture struct {
	srv       *Server
	h         http.Handler
	validated atomic.Int64
}

// newMemoFixture serves ConfigMap-like objects; users are named by the
// X-User header, and eve may not patch. mutators join the admission chain.
func newMemoFixture(t *testing.T, mutators ...admissionchain.Mutator) *memoFixture {
	t.Helper()
	f := &memoFixture{}
	reg := registry.New()
	reg.Add(&registry.Resource{
		GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap",
		ListKind: "ConfigMapList", Singular: "configmap", Namespaced: true,
		Strategy: registry.Typed[benchConfigMap]{Validate: func(*benchConfigMap) field.ErrorList { return nil }},
	})
	sec := Security{
		Filters: filters.Options{
			Authenticator: filters.AuthenticatorFunc(func(r *http.Request) (*filters.User, bool, error) {
				return &filters.User{Name: r.Header.Get("X-User")}, true, nil
			}),
			Authorizer: filters.AuthorizerFunc(func(_ context.Context, a filters.Attributes) (filters.Decision, string, error) {
				if a.User.Name == "eve" && a.Verb == "patch" {
					return filters.DecisionDeny, "eve may not patch", nil
				}
				return filters.DecisionAllow, "", nil
			}),
		},
		Admission: &admissionchain.Chain{Mutators: mutators, Validators: []admissionchain.Validator{
			admissionchain.ValidatorFunc(func(_ context.Context, a *admissionchain.Attributes) error {
				if a.Operation == admissionchain.Update {
					f.validated.Add(1)
				}
				return nil
			}),
		}},
	}
	srv, err := New(Options{Storage: newMemStore(), Registry: reg, Logger: logr.Discard(), Security: sec})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start(t.Context())
	f.srv, f.h = srv, srv.Handler()
	return f
}

const memoPath = "/api/v1/namespaces/default/configmaps/applied"

// do sends a request as user and fails unless it answers want.
func (f *memoFixture) do(t *testing.T, user, method, path, ctype, body string, want int) string {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("X-User", user)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if rec.Code != want {
		t.Fatalf("%s %s as %s: %d %s", method, path, user, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// apply applies body as alice (or user) and returns the answered resourceVersion.
func (f *memoFixture) apply(t *testing.T, user, query, body string, want int) string {
	t.Helper()
	out, err := api.DecodeMap([]byte(f.do(t, user, http.MethodPatch, memoPath+"?fieldManager=m"+query, mediaApplyPatch, body, want)))
	if err != nil {
		t.Fatal(err)
	}
	return api.NestedString(out, "metadata", "resourceVersion")
}

// seeded returns a fixture (see newMemoFixture) whose object alice created by
// apply and applied once more unchanged, which the memo remembers, and its
// resourceVersion; the count of validated updates starts at 0.
func seeded(t *testing.T, mutators ...admissionchain.Mutator) (*memoFixture, string) {
	t.Helper()
	f := newMemoFixture(t, mutators...)
	rv := f.apply(t, "alice", "", memoBody, http.StatusCreated)
	if again := f.apply(t, "alice", "", memoBody, http.StatusOK); again != rv {
		t.Fatalf("unchanged apply: resourceVersion %s → %s", rv, again)
	}
	f.validated.Store(0)
	return f, rv
}

// expectValidated fails unless the admission chain validated n updates since
// the last call.
func (f *memoFixture) expectValidated(t *testing.T, n int64, what string) {
	t.Helper()
	if got := f.validated.Swap(0); got != n {
		t.Fatalf("%s: admission validated %d updates, want %d", what, got, n)
	}
}

var memoBody = fmt.Sprintf(benchApplied, "v")

func TestApplyMemo(t *testing.T) {
	t.Run("an unchanged apply repeated is answered as a GET, without admission", func(t *testing.T) {
		f, rv := seeded(t)
		got := f.do(t, "alice", http.MethodPatch, memoPath+"?fieldManager=m", mediaApplyPatch, memoBody, http.StatusOK)
		f.expectValidated(t, 0, "repeated apply")
		if get := f.do(t, "alice", http.MethodGet, memoPath, "", "", http.StatusOK); got != get {
			t.Fatalf("memo answer %s, GET %s", got, get)
		}
		if again := f.apply(t, "alice", "", memoBody, http.StatusOK); again != rv {
			t.Fatalf("resourceVersion %s → %s", rv, again)
		}
	})
	t.Run("authorization still runs", func(t *testing.T) {
		f, _ := seeded(t)
		f.do(t, "eve", http.MethodPatch, memoPath+"?fieldManager=m", mediaApplyPatch, memoBody, http.StatusForbidden)
	})
	t.Run("another user misses (admission may judge users apart)", func(t *testing.T) {
		f, _ := seeded(t)
		f.apply(t, "bob", "", memoBody, http.StatusOK)
		f.expectValidated(t, 1, "apply by another user")
	})
	t.Run("dry runs are neither answered from nor remembered", func(t *testing.T) {
		f, _ := seeded(t)
		f.apply(t, "alice", "&dryRun=All", memoBody, http.StatusOK)
		f.apply(t, "alice", "&dryRun=All", memoBody, http.StatusOK)
		f.expectValidated(t, 2, "dry-run applies")
		other := fmt.Sprintf(benchApplied, "w")
		f.apply(t, "alice", "&dryRun=All", other, http.StatusOK)
		f.apply(t, "alice", "&dryRun=All", other, http.StatusOK)
		f.expectValidated(t, 2, "dry-run applies of a new configuration")
	})
	t.Run("an admission configuration change invalidates", func(t *testing.T) {
		f, _ := seeded(t)
		f.srv.AdmissionChanged()
		f.apply(t, "alice", "", memoBody, http.StatusOK)
		f.expectValidated(t, 1, "apply after AdmissionChanged")
		f.apply(t, "alice", "", memoBody, http.StatusOK)
		f.expectValidated(t, 0, "apply after it was remembered again")
	})
	t.Run("an object changed by another writer misses", func(t *testing.T) {
		f, rv := seeded(t)
		f.do(t, "alice", http.MethodPatch, memoPath, mediaMergePatch, `{"metadata":{"labels":{"other":"y"}}}`, http.StatusOK)
		f.validated.Store(0)
		next := f.apply(t, "alice", "", memoBody, http.StatusOK)
		f.expectValidated(t, 1, "apply after another write")
		if next == rv {
			t.Fatalf("answered the remembered resourceVersion %s after another write", rv)
		}
	})
	t.Run("a mutating plugin that may change the object disables it", func(t *testing.T) {
		f, _ := seeded(t, admissionchain.MutatorFunc(func(context.Context, *admissionchain.Attributes) error { return nil }))
		f.apply(t, "alice", "", memoBody, http.StatusOK)
		f.apply(t, "alice", "", memoBody, http.StatusOK)
		f.expectValidated(t, 2, "applies with a mutating plugin")
	})
	t.Run("a mutating plugin scoped elsewhere does not", func(t *testing.T) {
		f, _ := seeded(t, podsOnlyMutator{})
		f.apply(t, "alice", "", memoBody, http.StatusOK)
		f.expectValidated(t, 0, "apply with a mutating plugin for pods only")
	})
	t.Run("the last apply to the object is what is remembered", func(t *testing.T) {
		f, _ := seeded(t)
		other := fmt.Sprintf(benchApplied, "w")
		f.apply(t, "alice", "", other, http.StatusOK)
		f.validated.Store(0)
		f.apply(t, "alice", "", memoBody, http.StatusOK) // back to v: a change
		f.expectValidated(t, 1, "apply of the first configuration again")
	})
}

// podsOnlyMutator is a mutating plugin that only ever changes pods.
type podsOnlyMutator struct{}

func (podsOnlyMutator) Admit(context.Context, *admissionchain.Attributes) error { return nil }
func (podsOnlyMutator) MayMutate(_ context.Context, a *admissionchain.Attributes) bool {
	return a.Resource.Resource == "pods"
}

// TestApplyMemoBounded: the memo forgets the least recently used objects
// beyond applyMemoSize.
func TestApplyMemoBounded(t *testing.T) {
	var m applyMemo
	d := [32]byte{1}
	for i := range applyMemoSize + 10 {
		m.remember(fmt.Sprint(i), d, int64(i), 0)
	}
	if n := m.lru.Len(); n != applyMemoSize || len(m.entries) != applyMemoSize {
		t.Fatalf("%d entries (%d in the map), want %d", n, len(m.entries), applyMemoSize)
	}
	if m.lookup("0", d, 0, 0) {
		t.Fatal("the oldest entry is still remembered")
	}
	if !m.lookup(fmt.Sprint(applyMemoSize+9), d, int64(applyMemoSize+9), 0) {
		t.Fatal("the newest entry is forgotten")
	}
}

// TestAdmissionGenerationFollowsCaches: a change the watch cache of an
// admissionregistration.k8s.io resource or of namespaces sees changes the
// admission generation (so remembered applies miss); other resources' do not.
func TestAdmissionGenerationFollowsCaches(t *testing.T) {
	s := &Server{caches: map[string]*cacheHandle{}}
	caches := map[string]*watchCache{}
	for _, prefix := range []string{
		"/registry/admissionregistration.k8s.io/validatingadmissionpolicies/",
		"/registry/core/namespaces/",
		"/registry/core/configmaps/",
	} {
		wc := newWatchCache(newMemStore(), prefix, 8, logr.Discard(), func(key string, value []byte, rv int64) (*cachedObject, error) {
			return buildCachedObject(key, value, rv, false, nil)
		})
		caches[prefix] = wc
		s.caches[prefix] = &cacheHandle{cache: wc}
	}
	s.refreshAdmissionCachesLocked()
	put := func(prefix string, rv int64) {
		t.Helper()
		value := []byte(`{"apiVersion":"v1","kind":"X","metadata":{"name":"a"}}`)
		if !caches[prefix].apply(storage.Event{Type: storage.EventPut, KV: storage.KeyValue{Key: prefix + "a", Value: value, ModRevision: rv}}) {
			t.Fatalf("event at %d not applied", rv)
		}
	}
	gen := s.admissionGeneration()
	put("/registry/core/configmaps/", 1)
	if s.admissionGeneration() != gen {
		t.Fatal("a configmap change changed the admission generation")
	}
	for i, prefix := range []string{"/registry/admissionregistration.k8s.io/validatingadmissionpolicies/", "/registry/core/namespaces/"} {
		put(prefix, int64(2+i))
		next := s.admissionGeneration()
		if next == gen {
			t.Fatalf("a change under %s left the admission generation", prefix)
		}
		gen = next
	}
	s.AdmissionChanged()
	if s.admissionGeneration() == gen {
		t.Fatal("AdmissionChanged left the admission generation")
	}
}
