package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	rtmetrics "runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionchain "github.com/converge-dev/converge/framework/apiserver/admission"
	"github.com/converge-dev/converge/framework/storage"
	"github.com/converge-dev/converge/framework/storage/etcd"
)

// BenchmarkManagedFieldsEtcd is the creates half of BenchmarkManagedFields
// end to end: two API servers, each on its own embedded etcd (in-process
// client, no fsync; one etcd for both would make each server's watch cache
// decode the other's objects too), one keeping managedFields, the other with
// its field manager bypassed, each taking ConfigMap creates from 16
// concurrent clients through its HTTP handler, in alternating slices of 400
// (each side first every other time) so that load on the shared machine
// weighs on both alike. Metrics: creates/s of each (wall time), their ratio
// (goal ≥ 0.9), and the ratio of CPU per create.
func BenchmarkManagedFieldsEtcd(b *testing.B) { benchManagedFieldsEtcd(b, Security{}) }

// BenchmarkManagedFieldsEtcdAdmission is BenchmarkManagedFieldsEtcd with an
// admission chain of the shape of `converge up`'s (defaultAdmission), both
// servers alike: what users run.
func BenchmarkManagedFieldsEtcdAdmission(b *testing.B) {
	benchManagedFieldsEtcd(b, Security{Admission: defaultAdmission()})
}

// inProcessPlugin stands in for a built-in admission plugin of `converge
// up`'s chain that neither changes nor reads a ConfigMap (LimitRanger,
// DefaultStorageClass, ServiceAccount, the CSR requester, NodeRestriction,
// the RBAC escalation check, ResourceQuota without quotas): builtin/ may not
// be imported here. readsManagedFields stands in for the admission policy
// plugin, which reads them when bindings exist (none here).
type inProcessPlugin struct{ readsManagedFields func() bool }

func (inProcessPlugin) Admit(context.Context, *admissionchain.Attributes) error { return nil }
func (inProcessPlugin) AdmitReport(context.Context, *admissionchain.Attributes) (bool, error) {
	return false, nil
}
func (inProcessPlugin) MayMutate(context.Context, *admissionchain.Attributes) bool { return false }
func (inProcessPlugin) Validate(context.Context, *admissionchain.Attributes) error { return nil }
func (p inProcessPlugin) MayReadManagedFields(context.Context, *admissionchain.Attributes) bool {
	return p.readsManagedFields != nil && p.readsManagedFields()
}

// defaultAdmission is an admission chain of the shape of the secure `converge
// up`'s (builtin/security, controlplane/quota.go): in-process plugins
// (inProcessPlugin), and the mutating and validating webhook plugins, with
// no webhook configured.
func defaultAdmission() *admissionchain.Chain {
	noHooks := func(context.Context) ([]admissionchain.Hook, error) { return nil, nil }
	plugin := inProcessPlugin{}
	policies := inProcessPlugin{readsManagedFields: func() bool { return false }}
	return &admissionchain.Chain{
		Mutators: []admissionchain.Mutator{plugin, plugin, plugin, plugin,
			&admissionchain.Webhooks{Mutating: true, Hooks: noHooks}},
		Validators: []admissionchain.Validator{plugin, plugin, plugin, policies,
			&admissionchain.Webhooks{Hooks: noHooks}, plugin},
	}
}

func benchManagedFieldsEtcd(b *testing.B, sec Security) {
	store := func() storage.Interface {
		e, err := etcd.StartEmbedded(b.Context(), etcd.EmbeddedOptions{Dir: b.TempDir(), NoFsync: true, LogLevel: "error"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = e.Close() })
		return etcd.New(e.LocalClient())
	}
	// Each server and its etcd are started under their side's label: the
	// goroutines they start (etcd's, the watch cache's) carry it, so that
	// -tagfocus side=tracked shows all of a side's work but the GC's.
	server := func(name string, bypass bool) http.Handler {
		var h http.Handler
		pprof.Do(b.Context(), pprof.Labels("side", name), func(context.Context) {
			h = managedFieldsServerWith(b, store(), bypass, sec)
		})
		return h
	}
	sides := []struct {
		name  string
		h     http.Handler
		ns    string
		wall  time.Duration
		cpu   time.Duration
		alloc uint64
	}{
		{name: "tracked", h: server("tracked", false), ns: "default"},
		{name: "bypassed", h: server("bypassed", true), ns: "default"},
	}
	payload := strings.Repeat("x", 512)
	const slice, conc = 400, 16
	var seq atomic.Int64
	create := func(h http.Handler, ns string) error {
		i := seq.Add(1)
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","labels":{"app":"x"}},"data":{"k":%q,"n":"%d"}}`, i, payload, i)
		req := httptest.NewRequest(http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps?fieldManager=bench", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			return fmt.Errorf("create: %d %s", rec.Code, rec.Body)
		}
		return nil
	}
	for i := range sides { // warm up
		if err := create(sides[i].h, sides[i].ns); err != nil {
			b.Fatal(err)
		}
	}
	n := 0
	for b.Loop() {
		for j := range sides {
			// Each side goes first every other time (deferred runtime work
			// falls on the next slice).
			i := (j + n) % len(sides)
			s := &sides[i]
			var wg sync.WaitGroup
			var failed atomic.Pointer[error]
			startWall, startCPU, startAlloc := time.Now(), cpuTime(), allocatedBytes()
			for range conc {
				wg.Go(func() {
					// Labelled for -cpuprofile: -tagfocus side=tracked shows
					// the handler's work of one side.
					pprof.Do(b.Context(), pprof.Labels("side", s.name), func(context.Context) {
						for range slice / conc {
							if err := create(s.h, s.ns); err != nil {
								failed.Store(&err)
								return
							}
						}
					})
				})
			}
			wg.Wait()
			s.wall += time.Since(startWall)
			s.cpu += cpuTime() - startCPU
			s.alloc += allocatedBytes() - startAlloc
			if err := failed.Load(); err != nil {
				b.Fatal(*err)
			}
		}
		n++
	}
	ops := float64(n * slice)
	rate := func(d time.Duration) float64 { return ops / d.Seconds() }
	tracked, bypassed := sides[0], sides[1]
	b.ReportMetric(rate(tracked.wall), "tracked-creates/s")
	b.ReportMetric(rate(bypassed.wall), "bypassed-creates/s")
	b.ReportMetric(rate(tracked.wall)/rate(bypassed.wall), "creates-ratio")
	b.ReportMetric(float64(tracked.cpu.Nanoseconds())/ops, "tracked-cpu-ns/create")
	b.ReportMetric(float64(bypassed.cpu.Nanoseconds())/ops, "bypassed-cpu-ns/create")
	b.ReportMetric(float64(bypassed.cpu)/float64(tracked.cpu), "cpu-ratio")
	b.ReportMetric(float64(tracked.alloc)/ops, "tracked-B/create")
	b.ReportMetric(float64(bypassed.alloc)/ops, "bypassed-B/create")
}

// allocatedBytes is what the process has allocated on the heap so far.
func allocatedBytes() uint64 {
	s := []rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s)
	return s[0].Value.Uint64()
}
