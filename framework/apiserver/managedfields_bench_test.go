package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/fieldmanager"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// managedFieldsServer is an API server over memory serving ConfigMap-like
// objects; bypass turns its field manager off (no managedFields kept, as if
// the resource had no schema), the baseline of what keeping them costs.
func managedFieldsServer(tb testing.TB, bypass bool) http.Handler {
	tb.Helper()
	return managedFieldsServerOn(tb, newMemStore(), bypass)
}

// managedFieldsServerOn is managedFieldsServer over store.
func managedFieldsServerOn(tb testing.TB, store storage.Interface, bypass bool) http.Handler {
	tb.Helper()
	return managedFieldsServerWith(tb, store, bypass, Security{})
}

// managedFieldsServerWith is managedFieldsServerOn with sec's filters and
// admission chain.
func managedFieldsServerWith(tb testing.TB, store storage.Interface, bypass bool, sec Security) http.Handler {
	tb.Helper()
	reg := registry.New()
	res := &registry.Resource{
		GroupVersion: api.GroupVersion{Version: "v1"}, Resource: "configmaps", Kind: "ConfigMap",
		ListKind: "ConfigMapList", Singular: "configmap", Namespaced: true,
		Strategy: registry.Typed[benchConfigMap]{Validate: func(cm *benchConfigMap) field.ErrorList { return nil }},
	}
	reg.Add(res)
	srv, err := New(Options{Storage: store, Registry: reg, Logger: logr.Discard(), Security: sec})
	if err != nil {
		tb.Fatal(err)
	}
	srv.Start(tb.Context())
	if bypass {
		for _, mode := range []updateMode{updateMain, updateStatusAndSpec} {
			srv.fields.m.Store(managerKey{res: reg.Get(res.GroupVersionResource()), mode: mode}, (*fieldmanager.Manager)(nil))
		}
	}
	return srv.Handler()
}

// serve sends one request to h and fails unless it answers want.
func serve(tb testing.TB, h http.Handler, method, path, ctype, body string, want int) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		tb.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	return rec
}

const benchApplied = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied","labels":{"app":"x","tier":"web"}},"data":{"k":%q,"a":"1","b":"2"}}`

// TestApplyUnchangedCommitsNothing: applying again what was applied stores
// nothing (the resourceVersion stays), as Kubernetes does.
func TestApplyUnchangedCommitsNothing(t *testing.T) {
	h := managedFieldsServer(t, false)
	path := "/api/v1/namespaces/default/configmaps/applied?fieldManager=bench"
	body := fmt.Sprintf(benchApplied, strings.Repeat("x", 512))
	first, err := api.DecodeMap(serve(t, h, http.MethodPatch, path, mediaApplyPatch, body, http.StatusCreated).Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		again, err := api.DecodeMap(serve(t, h, http.MethodPatch, path, mediaApplyPatch, body, http.StatusOK).Body.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if a, b := api.NestedString(first, "metadata", "resourceVersion"), api.NestedString(again, "metadata", "resourceVersion"); a != b {
			t.Fatalf("an unchanged apply committed: resourceVersion %s → %s", a, b)
		}
	}
	got, err := api.DecodeMap(serve(t, h, http.MethodGet, "/api/v1/namespaces/default/configmaps/applied", "", "", http.StatusOK).Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if a, b := api.NestedString(first, "metadata", "resourceVersion"), api.NestedString(got, "metadata", "resourceVersion"); a != b {
		t.Fatalf("stored resourceVersion %s, want %s", b, a)
	}
}

// BenchmarkManagedFields measures through the HTTP handler, storage in
// memory, in alternating slices of 100 requests (the two creating sides each
// first every other time) so that load on the shared machine weighs on all
// alike:
//   - creates (POST of a ~600 B ConfigMap) with managedFields kept, against
//     the same server with its field manager bypassed (goal: ≥ 0.9×);
//   - a server-side apply that changes nothing (it stores nothing; answered
//     from the apply memo) against a GET of the same object (goal: ≤ 1.5×).
//
// Times are the process's CPU time (user and system, from getrusage) per
// request, less noisy than wall time on a shared machine. Metrics: CPU ns per
// request of each, creates-ratio (bypassed ÷ tracked CPU per create, i.e.
// tracked creates/s ÷ bypassed creates/s at equal CPU) and apply/get.
func BenchmarkManagedFields(b *testing.B) {
	tracked, bypassed := managedFieldsServer(b, false), managedFieldsServer(b, true)
	payload := strings.Repeat("x", 512)
	applyPath := "/api/v1/namespaces/default/configmaps/applied?fieldManager=bench"
	applyBody := fmt.Sprintf(benchApplied, payload)
	serve(b, tracked, http.MethodPatch, applyPath, mediaApplyPatch, applyBody, http.StatusCreated)
	for _, c := range []struct {
		h    http.Handler
		want bool
	}{{tracked, true}, {bypassed, false}} {
		h, want := c.h, c.want
		rec := serve(b, h, http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldManager=bench", "application/json",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe"},"data":{"a":"1"}}`, http.StatusCreated)
		if got := strings.Contains(rec.Body.String(), `"managedFields"`); got != want {
			b.Fatalf("managedFields kept: %v, want %v: %s", got, want, rec.Body)
		}
	}
	createBody := func(i int) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","labels":{"app":"x"}},"data":{"k":%q,"n":"%d"}}`, i, payload, i)
	}
	const slice = 100
	var tTracked, tBypassed, tApply, tGet time.Duration
	n := 0
	b.ReportAllocs()
	creates := func(side string, h http.Handler) (d time.Duration) {
		// Labelled for -cpuprofile (-tagfocus side=tracked).
		pprof.Do(b.Context(), pprof.Labels("side", side), func(context.Context) {
			start := cpuTime()
			for i := range slice {
				serve(b, h, http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldManager=bench", "application/json", createBody(n*slice+i), http.StatusCreated)
			}
			d = cpuTime() - start
		})
		return d
	}
	for b.Loop() {
		// Each side goes first every other time: work the runtime defers
		// (garbage collection) falls on the slice after the one that made it.
		inTurn(n%2 == 1, func() { tTracked += creates("tracked", tracked) }, func() { tBypassed += creates("bypassed", bypassed) })
		start := cpuTime()
		for range slice {
			serve(b, tracked, http.MethodPatch, applyPath, mediaApplyPatch, applyBody, http.StatusOK)
		}
		tApply += cpuTime() - start
		start = cpuTime()
		for range slice {
			serve(b, tracked, http.MethodGet, "/api/v1/namespaces/default/configmaps/applied", "", "", http.StatusOK)
		}
		tGet += cpuTime() - start
		n++
	}
	ops := float64(n * slice)
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / ops }
	b.ReportMetric(per(tTracked), "tracked-cpu-ns/create")
	b.ReportMetric(per(tBypassed), "bypassed-cpu-ns/create")
	b.ReportMetric(per(tBypassed)/per(tTracked), "creates-ratio")
	b.ReportMetric(per(tApply), "apply-noop-cpu-ns")
	b.ReportMetric(per(tGet), "get-cpu-ns")
	b.ReportMetric(per(tApply)/per(tGet), "apply/get")
}

// BenchmarkManagedFieldsUpdate is BenchmarkManagedFields for Update
// operations, as controllers write: a PUT of a ~600 B ConfigMap without
// managedFields (the built-in controllers strip them from their caches) and
// a merge PATCH, each changing one value of an object another manager
// created, with managedFields kept against the field manager bypassed, in
// alternating slices of 100. Metrics: CPU ns per request of each side and
// their ratios (bypassed ÷ tracked; 1 is free).
func BenchmarkManagedFieldsUpdate(b *testing.B) {
	tracked, bypassed := managedFieldsServer(b, false), managedFieldsServer(b, true)
	payload := strings.Repeat("x", 512)
	const objects, slice = 100, 100
	for _, h := range []http.Handler{tracked, bypassed} {
		for i := range objects {
			serve(b, h, http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldManager=creator", mediaJSON,
				fmt.Sprintf(`{"metadata":{"name":"u-%d","labels":{"app":"x"}},"data":{"k":%q,"n":"0"}}`, i, payload), http.StatusCreated)
		}
	}
	seq := 0
	put := func(h http.Handler) time.Duration {
		start := cpuTime()
		for range slice {
			seq++
			name := fmt.Sprintf("u-%d", seq%objects)
			serve(b, h, http.MethodPut, "/api/v1/namespaces/default/configmaps/"+name+"?fieldManager=controller", mediaJSON,
				fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"app":"x"}},"data":{"k":%q,"n":"%d"}}`, name, payload, seq), http.StatusOK)
		}
		return cpuTime() - start
	}
	patch := func(h http.Handler) time.Duration {
		start := cpuTime()
		for range slice {
			seq++
			serve(b, h, http.MethodPatch, fmt.Sprintf("/api/v1/namespaces/default/configmaps/u-%d?fieldManager=patcher", seq%objects),
				"application/merge-patch+json", fmt.Sprintf(`{"data":{"n":"%d"}}`, seq), http.StatusOK)
		}
		return cpuTime() - start
	}
	// Labelled for -cpuprofile (-tagfocus side=tracked).
	labelled := func(side string, f func(http.Handler) time.Duration) func(http.Handler) time.Duration {
		return func(h http.Handler) (d time.Duration) {
			pprof.Do(b.Context(), pprof.Labels("side", side), func(context.Context) { d = f(h) })
			return d
		}
	}
	tput, bput, tpatch, bpatch := labelled("tracked", put), labelled("bypassed", put), labelled("tracked", patch), labelled("bypassed", patch)
	var tPut, bPut, tPatch, bPatch time.Duration
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		// Each side first every other time.
		inTurn(n%2 == 1, func() { tPut += tput(tracked) }, func() { bPut += bput(bypassed) })
		inTurn(n%2 == 1, func() { tPatch += tpatch(tracked) }, func() { bPatch += bpatch(bypassed) })
		n++
	}
	for _, r := range []struct {
		op                string
		tracked, bypassed time.Duration
	}{{"put", tPut, bPut}, {"patch", tPatch, bPatch}} {
		ops := float64(n * slice)
		b.ReportMetric(float64(r.tracked.Nanoseconds())/ops, "tracked-cpu-ns/"+r.op)
		b.ReportMetric(float64(r.bypassed.Nanoseconds())/ops, "bypassed-cpu-ns/"+r.op)
		b.ReportMetric(float64(r.bypassed)/float64(r.tracked), r.op+"-ratio")
	}
}

// inTurn runs first then second, or the other way round when swap is set.
func inTurn(swap bool, first, second func()) {
	if swap {
		first, second = second, first
	}
	first()
	second()
}

// BenchmarkManagedFieldsAdmission is the creates of BenchmarkManagedFields
// through servers with an admission chain of the shape of `converge up`'s
// (defaultAdmission): CPU ns per create with managedFields kept and with
// the field manager bypassed, in alternating slices of 100, and their ratio
// (creates-ratio, bypassed ÷ tracked).
func BenchmarkManagedFieldsAdmission(b *testing.B) {
	sec := Security{Admission: defaultAdmission()}
	tracked, bypassed := managedFieldsServerWith(b, newMemStore(), false, sec), managedFieldsServerWith(b, newMemStore(), true, sec)
	payload := strings.Repeat("x", 512)
	const slice = 100
	seq := 0
	creates := func(h http.Handler) time.Duration {
		start := cpuTime()
		for range slice {
			seq++
			serve(b, h, http.MethodPost, "/api/v1/namespaces/default/configmaps?fieldManager=bench", mediaJSON,
				fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","labels":{"app":"x"}},"data":{"k":%q,"n":"%d"}}`, seq, payload, seq), http.StatusCreated)
		}
		return cpuTime() - start
	}
	var tTracked, tBypassed time.Duration
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		inTurn(n%2 == 1, func() { tTracked += creates(tracked) }, func() { tBypassed += creates(bypassed) })
		n++
	}
	ops := float64(n * slice)
	b.ReportMetric(float64(tTracked.Nanoseconds())/ops, "tracked-cpu-ns/create")
	b.ReportMetric(float64(tBypassed.Nanoseconds())/ops, "bypassed-cpu-ns/create")
	b.ReportMetric(float64(tBypassed)/float64(tTracked), "creates-ratio")
}
