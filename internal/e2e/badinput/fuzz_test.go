package badinput

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// fuzzTargets are the requests FuzzWrite sends its bodies to; all are dry runs
// or cannot succeed, so the store must never change.
var fuzzTargets = []struct{ method, path, ctype string }{
	{http.MethodPost, cmPath + "?dryRun=All", ctJSON},
	{http.MethodPost, cmPath + "?dryRun=All", ctYAML},
	{http.MethodPost, cmPath + "?dryRun=All", ctProtobuf},
	{http.MethodPut, cm1Path + "?dryRun=All", ctJSON},
	{http.MethodPut, cm1Path + "?dryRun=All", ctProtobuf},
	{http.MethodPatch, cm1Path + "?dryRun=All", ctJSONP},
	{http.MethodPatch, cm1Path + "?dryRun=All", ctMerge},
	{http.MethodPatch, p1Path + "?dryRun=All", ctSMP},
	{http.MethodDelete, cm1Path + "?dryRun=All", ctJSON},
	{http.MethodDelete, cm1Path + "?dryRun=All", ctProtobuf},
	{http.MethodPost, widgetPath + "?dryRun=All", ctJSON},
	{http.MethodPatch, w1Path + "?dryRun=All", ctMerge},
	{http.MethodPut, d1Path + "/scale?dryRun=All", ctJSON},
	{http.MethodPatch, w1Path + "/status?dryRun=All", ctJSONP},
	{http.MethodPost, p1Path + "/eviction?dryRun=All", ctJSON},
	{http.MethodPost, "/api/v1/namespaces/" + ns + "/resourcequotas?dryRun=All", ctJSON},
	{http.MethodPost, "/api/v1/namespaces/" + ns + "/limitranges?dryRun=All", ctJSON},
}

// FuzzWrite sends arbitrary bodies to the write endpoints through the API
// server's handler: every answer is a success or a well-formed 4xx Status, and
// nothing is stored. Without -fuzz it runs the seed corpus.
func FuzzWrite(f *testing.F) {
	for i, s := range [][]byte{
		[]byte(validCM), []byte(validWidget), []byte(`[{"op":"test","path":"/data/k","value":"x"}]`),
		[]byte(`{"metadata":{"name":"cm1","uid":"x"}}`), []byte(`{"spec":{"replicas":-1}}`),
		[]byte("metadata:\n  name: [\n"), protoUnknown("v1", "ConfigMap", []byte{0x0a, 0x02, 0x0a, 0x00}),
		append(bytes.Clone(k8sMagic), 0x0b, 0x0c), []byte(`{"propagationPolicy":"Sideways"}`),
		[]byte(`{"meTadata":{"name":"x"}}`), []byte(nested(`{"a":`, "1", "}", 10001)),
		[]byte(`{"metadata":{"name":"q"},"spec":{"hard":{"pods":"1e308","count/x.y":"1.5"},"scopes":["BestEffort"]}}`),
		[]byte(`{"metadata":{"name":"l"},"spec":{"limits":[{"type":"Container","min":{"cpu":"2"},"max":{"cpu":"1"},"maxLimitRequestRatio":{"cpu":"0"}}]}}`),
	} {
		f.Add(uint8(i), s)
	}
	h := newHarness(f)
	var setUpDone bool
	f.Fuzz(func(t *testing.T, target uint8, body []byte) {
		if !setUpDone {
			h.setUp(t)
			setUpDone = true
		}
		tg := fuzzTargets[int(target)%len(fuzzTargets)]
		rev := h.revision(t)
		r := httptest.NewRequestWithContext(t.Context(), tg.method, tg.path, bytes.NewReader(body))
		r.Header.Set("Content-Type", tg.ctype)
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.env.ControlPlane.Handler().ServeHTTP(rec, r)
		}()
		select {
		case <-done:
		case <-time.After(requestTimeout):
			t.Fatalf("%s %s %s with body %q: no answer after %v", tg.method, tg.path, tg.ctype, body, requestTimeout)
		}
		resp := response{code: rec.Code, body: rec.Body.Bytes(), header: rec.Header()}
		checkTolerated(t, tg.method+" "+tg.path+" "+tg.ctype, resp)
		if got := h.revision(t); got != rev {
			t.Fatalf("%s %s with body %q moved the store from revision %d to %d: %v", tg.method, tg.path, body, rev, got, resp)
		}
	})
}
