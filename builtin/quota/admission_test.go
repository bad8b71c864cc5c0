package quota

import (
	"context"
	"strconv"
	"sync"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// memStore keeps quotas in memory with resourceVersion checks; List can be
// made to lag (return an older copy), as a watch cache does.
type memStore struct {
	mu     sync.Mutex
	quotas map[string]*corev1.ResourceQuota
	stale  map[string]*corev1.ResourceQuota // what List returns instead, when set
	rv     int
}

func (m *memStore) List(_ context.Context, ns string) ([]*corev1.ResourceQuota, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*corev1.ResourceQuota
	for name, q := range m.quotas {
		if s, ok := m.stale[name]; ok {
			q = s
		}
		c := *q
		out = append(out, &c)
	}
	return out, nil
}

func (m *memStore) Get(_ context.Context, _, name string) (*corev1.ResourceQuota, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.quotas[name]
	if !ok {
		return nil, apierrors.NewNotFound(api.GroupResource{Resource: "resourcequotas"}, name)
	}
	c := *q
	return &c, nil
}

func (m *memStore) UpdateStatus(_ context.Context, q *corev1.ResourceQuota) (*corev1.ResourceQuota, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.quotas[q.Name]
	if cur.ResourceVersion != q.ResourceVersion {
		return nil, apierrors.NewConflict(api.GroupResource{Resource: "resourcequotas"}, q.Name, "modified")
	}
	m.rv++
	c := *q
	c.ResourceVersion = strconv.Itoa(m.rv)
	m.quotas[q.Name] = &c
	out := c
	return &out, nil
}

func TestAdmissionChargesOnceAndRetriesConflicts(t *testing.T) {
	t.Parallel()
	hard := list("count/configmaps", "3")
	st := &memStore{rv: 10, quotas: map[string]*corev1.ResourceQuota{"q": {
		ObjectMeta: api.ObjectMeta{Name: "q", Namespace: "ns", UID: "u", ResourceVersion: "10"},
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: list("count/configmaps", "0")},
	}}}
	p := NewAdmission(st)
	create := func() error {
		return p.Validate(t.Context(), &admission.Attributes{
			Operation: admission.Create, Namespaced: true, Namespace: "ns",
			Resource: api.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Object: map[string]any{},
		})
	}
	// Someone else charged one unit since the (lagging) listing: the first
	// write conflicts, the plugin reads the quota again and charges on top.
	st.stale = map[string]*corev1.ResourceQuota{"q": st.quotas["q"]}
	other := *st.quotas["q"]
	other.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: list("count/configmaps", "1")}
	other.ResourceVersion = "11"
	st.quotas["q"], st.rv = &other, 11
	if err := create(); err != nil {
		t.Fatal(err)
	}
	if got := st.quotas["q"].Status.Used["count/configmaps"].String(); got != "2" {
		t.Fatalf("used = %s after a conflict, want 2", got)
	}
	// The listing still lags; the plugin uses what it wrote itself.
	if err := create(); err != nil {
		t.Fatal(err)
	}
	err := create()
	if err == nil || err.Error() != "exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=3, limited: count/configmaps=3" {
		t.Fatalf("fourth create: %v", err)
	}
	if got := st.quotas["q"].Status.Used["count/configmaps"].String(); got != "3" {
		t.Fatalf("used = %s, want 3", got)
	}
}

func TestAdmissionConcurrentCreatesNeverShareTheLastUnit(t *testing.T) {
	t.Parallel()
	hard := list("count/secrets", "5")
	st := &memStore{quotas: map[string]*corev1.ResourceQuota{"q": {
		ObjectMeta: api.ObjectMeta{Name: "q", Namespace: "ns", UID: "u", ResourceVersion: "0"},
		Status:     corev1.ResourceQuotaStatus{Hard: hard, Used: list("count/secrets", "0")},
	}}}
	// Two API servers: two plugins sharing one store.
	plugins := []*Admission{NewAdmission(st), NewAdmission(st)}
	var wg sync.WaitGroup
	var mu sync.Mutex
	admitted := 0
	for i := range 40 {
		wg.Go(func() {
			err := plugins[i%2].Validate(t.Context(), &admission.Attributes{
				Operation: admission.Create, Namespaced: true, Namespace: "ns",
				Resource: api.GroupVersionResource{Version: "v1", Resource: "secrets"}, Object: map[string]any{},
			})
			if err == nil {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if admitted != 5 {
		t.Fatalf("admitted %d creates, want 5", admitted)
	}
}
