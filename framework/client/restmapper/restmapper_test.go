package restmapper_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/framework/client/restmapper"
)

// fakeDiscovery serves /api, /apis and per-GV lists; a new group can be added
// while it runs, like a CRD being established.
type fakeDiscovery struct {
	mu       sync.Mutex
	widgets  bool
	requests map[string]int
}

func (f *fakeDiscovery) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests[r.URL.Path]++
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api":
		_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
	case "/apis":
		groups := `{"name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1","version":"v1"}}`
		if f.widgets {
			groups += `,{"name":"example.com","versions":[{"groupVersion":"example.com/v1","version":"v1"}],"preferredVersion":{"groupVersion":"example.com/v1","version":"v1"}}`
		}
		_, _ = w.Write([]byte(`{"kind":"APIGroupList","groups":[` + groups + `]}`))
	case "/api/v1":
		_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[
			{"name":"pods","singularName":"pod","namespaced":true,"kind":"Pod","verbs":["get"],"shortNames":["po"]},
			{"name":"pods/status","singularName":"","namespaced":true,"kind":"Pod","verbs":["get"]},
			{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get"],"shortNames":["ns"]}]}`))
	case "/apis/apps/v1":
		_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[
			{"name":"deployments","singularName":"deployment","namespaced":true,"kind":"Deployment","verbs":["get"],"shortNames":["deploy"]},
			{"name":"deployments/scale","singularName":"","namespaced":true,"group":"autoscaling","version":"v1","kind":"Scale","verbs":["get"]}]}`))
	case "/apis/example.com/v1":
		if !f.widgets {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"example.com/v1","resources":[
			{"name":"widgets","singularName":"widget","namespaced":true,"kind":"Widget","verbs":["get"]}]}`))
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeDiscovery) count(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[path]
}

func TestMapper(t *testing.T) {
	t.Parallel()
	fd := &fakeDiscovery{requests: map[string]int{}}
	srv := httptest.NewServer(fd)
	defer srv.Close()
	rc, err := rest.NewClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.CloseIdleConnections()
	m := restmapper.New(rc, restmapper.Options{MinRefreshInterval: 200 * time.Millisecond})
	ctx := t.Context()

	mp, err := m.RESTMapping(ctx, api.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"})
	if err != nil || mp.Resource.Resource != "deployments" || !mp.Namespaced {
		t.Fatalf("deployment mapping %+v, %v", mp, err)
	}
	if fd.count("/api/v1") != 0 {
		t.Fatal("discovery is not lazy: /api/v1 was read for an apps kind")
	}
	if _, err := m.RESTMapping(ctx, api.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}); err != nil {
		t.Fatal(err)
	}
	if n := fd.count("/apis/apps/v1"); n != 1 {
		t.Fatalf("/apis/apps/v1 read %d times, want 1 (cached)", n)
	}
	for name, want := range map[string]string{"po": "pods", "namespace": "namespaces", "deploy": "deployments", "deployments.apps": "deployments"} {
		mp, err := m.ResourceFor(ctx, name)
		if err != nil || mp.Resource.Resource != want {
			t.Fatalf("ResourceFor(%s) = %+v, %v", name, mp, err)
		}
	}

	widget := api.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if _, err := m.RESTMapping(ctx, widget); !restmapper.IsNoMatch(err) {
		t.Fatalf("widget before it exists: %v", err)
	}
	// The resource appears; within the refresh interval misses fail fast...
	fd.mu.Lock()
	fd.widgets = true
	fd.mu.Unlock()
	before := fd.count("/apis")
	if _, err := m.RESTMapping(ctx, widget); !restmapper.IsNoMatch(err) {
		t.Fatalf("widget within the refresh interval: %v", err)
	}
	if fd.count("/apis") != before {
		t.Fatal("discovery re-read within the refresh interval")
	}
	// ...and after it, one miss re-reads discovery and learns it.
	time.Sleep(250 * time.Millisecond)
	mp, err = m.RESTMapping(ctx, widget)
	if err != nil || mp.Resource.Resource != "widgets" {
		t.Fatalf("widget after refresh: %+v, %v", mp, err)
	}
}
