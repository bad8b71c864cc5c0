package badinput

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/converge-dev/converge/builtin/apiendpoints"
	"github.com/converge-dev/converge/testenv"
)

// requestTimeout bounds every request: a hang is a failure, not a slow test.
const requestTimeout = 10 * time.Second

// Media types.
const (
	ctJSON     = "application/json"
	ctYAML     = "application/yaml"
	ctProtobuf = "application/vnd.kubernetes.protobuf"
	ctJSONP    = "application/json-patch+json"
	ctMerge    = "application/merge-patch+json"
	ctSMP      = "application/strategic-merge-patch+json"
	ctApply    = "application/apply-patch+yaml"
)

// k8sMagic prefixes every Kubernetes protobuf body ("k8s\0").
var k8sMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// harness is one running control plane and a client for it.
type harness struct {
	env    *testenv.Environment
	client *http.Client
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	env := testenv.StartT(t, testenv.Options{})
	tr := &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}
	t.Cleanup(tr.CloseIdleConnections)
	return &harness{env: env, client: &http.Client{Transport: tr, Timeout: requestTimeout}}
}

// req describes one HTTP request.
type req struct {
	method, path, ctype string
	body                []byte
	// header adds request headers.
	header map[string]string
	// chunked sends the body without a Content-Length.
	chunked bool
}

// response is what came back.
type response struct {
	code   int
	body   []byte
	header http.Header
}

func (r response) String() string {
	b := r.body
	if len(b) > 600 {
		b = append(b[:600:600], "…"...)
	}
	return fmt.Sprintf("%d %s", r.code, b)
}

func (h *harness) do(t testing.TB, rq req) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var body io.Reader
	if rq.body != nil {
		body = bytes.NewReader(rq.body)
		if rq.chunked {
			body = io.MultiReader(body) // hides the length from net/http
		}
	}
	hr, err := http.NewRequestWithContext(ctx, rq.method, h.env.URL+rq.path, body)
	if err != nil {
		t.Fatalf("build %s %s: %v", rq.method, rq.path, err)
	}
	if rq.ctype != "" {
		hr.Header.Set("Content-Type", rq.ctype)
	}
	hr.Header.Set("Accept", "application/json")
	for k, v := range rq.header {
		hr.Header.Set(k, v)
	}
	start := time.Now()
	resp, err := h.client.Do(hr)
	if err != nil {
		t.Fatalf("%s %s (%d bytes): no answer after %v: %v", rq.method, rq.path, len(rq.body), time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read response: %v", rq.method, rq.path, err)
	}
	return response{code: resp.StatusCode, body: b, header: resp.Header}
}

// status is the part of a Kubernetes Status the suite checks.
type status struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Status     string `json:"status"`
	Message    string `json:"message"`
	Reason     string `json:"reason"`
	Code       int    `json:"code"`
	Details    *struct {
		Name   string `json:"name"`
		Kind   string `json:"kind"`
		Causes []struct {
			Type    string `json:"reason"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"causes"`
	} `json:"details"`
}

// statusProblem returns why resp is not a well-formed failure Status, or "".
func statusProblem(resp response) string {
	var st status
	if err := json.Unmarshal(resp.body, &st); err != nil {
		return fmt.Sprintf("body is not a Status: %v", err)
	}
	if ct := resp.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("Content-Type %q, want application/json", ct)
	}
	switch {
	case st.Kind != "Status" || st.APIVersion != "v1":
		return fmt.Sprintf("kind %q apiVersion %q, want Status v1", st.Kind, st.APIVersion)
	case st.Status != "Failure":
		return fmt.Sprintf("status %q, want Failure", st.Status)
	case st.Code != resp.code:
		return fmt.Sprintf("code %d in the body, %d on the wire", st.Code, resp.code)
	case st.Reason == "":
		return "no reason"
	case st.Message == "":
		return "no message"
	}
	return ""
}

// rvTooLarge reports the one documented 5xx: 504 Timeout with cause
// ResourceVersionTooLarge (the client's resourceVersion is ahead of the store).
func rvTooLarge(resp response) bool {
	if resp.code != http.StatusGatewayTimeout {
		return false
	}
	var st status
	if json.Unmarshal(resp.body, &st) != nil || st.Reason != "Timeout" || st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == "ResourceVersionTooLarge" {
			return true
		}
	}
	return false
}

// checkRejected fails t unless resp is a well-formed 4xx Status (with one of the
// codes in want when given).
func checkRejected(t testing.TB, what string, resp response, want ...int) status {
	t.Helper()
	var st status
	if resp.code < 400 || resp.code >= 500 {
		if !rvTooLarge(resp) {
			t.Errorf("%s: got %v, want a 4xx Status", what, resp)
			return st
		}
	}
	if p := statusProblem(resp); p != "" {
		t.Errorf("%s: %s: %v", what, p, resp)
		return st
	}
	if len(want) > 0 && !containsInt(want, resp.code) {
		t.Errorf("%s: got %v, want code in %v", what, resp, want)
	}
	_ = json.Unmarshal(resp.body, &st)
	return st
}

// checkTolerated fails t when resp is a 5xx or a malformed error Status; a 2xx
// answer is fine.
func checkTolerated(t testing.TB, what string, resp response) {
	t.Helper()
	if resp.code >= 400 || resp.code < 200 {
		checkRejected(t, what, resp)
	}
}

func containsInt(s []int, v int) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// revision is the store's current etcd revision, less the writes of the API
// server's lease (builtin/apiendpoints refreshes it every few seconds, whatever
// the requests do): it moves exactly when a request changes stored state.
func (h *harness) revision(t testing.TB) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := h.env.ControlPlane.EtcdClient().Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("read etcd revision: %v", err)
	}
	rev := resp.Header.Revision
	// Each lease key's version counts its writes (it is never deleted here).
	leases, err := h.env.ControlPlane.EtcdClient().Get(ctx, apiendpoints.LeasePrefix, clientv3.WithPrefix(), clientv3.WithRev(rev))
	if err != nil {
		t.Fatalf("read the API server leases: %v", err)
	}
	for _, kv := range leases.Kvs {
		rev -= kv.Version
	}
	return rev
}

// writtenSince names the keys under /registry/ last written after revision
// rev (created or updated; deletions leave no key), with their revisions.
func (h *harness) writtenSince(t testing.TB, rev int64) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := h.env.ControlPlane.EtcdClient().Get(ctx, "/registry/", clientv3.WithPrefix(), clientv3.WithKeysOnly(),
		clientv3.WithMinModRev(rev+1))
	if err != nil {
		return fmt.Sprintf("(cannot read them: %v)", err)
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, fmt.Sprintf("%s@%d", kv.Key, kv.ModRevision))
	}
	if len(keys) == 0 {
		return "none (deletions only)"
	}
	return strings.Join(keys, ", ")
}

// snapshot is the names and resourceVersions of a list, and its revision.
type snapshot struct {
	rv    string
	items map[string]string
}

func (h *harness) list(t testing.TB, path string) snapshot {
	t.Helper()
	resp := h.do(t, req{method: http.MethodGet, path: path})
	if resp.code != http.StatusOK {
		t.Fatalf("list %s: %v", path, resp)
	}
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Namespace       string `json:"namespace"`
				Name            string `json:"name"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(resp.body, &l); err != nil {
		t.Fatalf("list %s: %v", path, err)
	}
	s := snapshot{rv: l.Metadata.ResourceVersion, items: map[string]string{}}
	for _, it := range l.Items {
		s.items[it.Metadata.Namespace+"/"+it.Metadata.Name] = it.Metadata.ResourceVersion
	}
	return s
}

// unchanged runs f and fails t if it changed stored state: the etcd revision or
// any object listed under paths.
func (h *harness) unchanged(t *testing.T, paths []string, f func(t *testing.T)) {
	t.Helper()
	before := make([]snapshot, len(paths))
	for i, p := range paths {
		before[i] = h.list(t, p)
	}
	rev := h.revision(t)
	f(t)
	if got := h.revision(t); got != rev {
		t.Errorf("rejected requests moved the store's revision from %d to %d; keys written since: %s", rev, got, h.writtenSince(t, rev))
	}
	for i, p := range paths {
		after := h.list(t, p)
		if fmt.Sprint(after.items) != fmt.Sprint(before[i].items) {
			t.Errorf("list %s changed: before %v, after %v", p, before[i].items, after.items)
		}
	}
}

// seed returns the run's random seed (BADINPUT_SEED replays one) and logs it.
func seed(t testing.TB) uint64 {
	t.Helper()
	s := uint64(time.Now().UnixNano())
	if v := os.Getenv("BADINPUT_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("BADINPUT_SEED=%q: %v", v, err)
		}
		s = n
	}
	t.Logf("random seed %d (replay with BADINPUT_SEED=%d)", s, s)
	return s
}

// mutate returns a random corruption of b, in the style of Go's fuzzing
// mutators: truncate, flip, insert, delete, duplicate or overwrite bytes, or
// splice in JSON punctuation.
func mutate(rng *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	for range 1 + rng.IntN(3) {
		if len(out) == 0 {
			out = append(out, byte(rng.IntN(256)))
			continue
		}
		i := rng.IntN(len(out))
		switch rng.IntN(7) {
		case 0: // truncate
			out = out[:i]
		case 1: // flip a bit
			out[i] ^= 1 << rng.IntN(8)
		case 2: // insert a random byte
			out = append(out[:i], append([]byte{byte(rng.IntN(256))}, out[i:]...)...)
		case 3: // delete a span
			j := min(len(out), i+1+rng.IntN(8))
			out = append(out[:i], out[j:]...)
		case 4: // duplicate a span
			j := min(len(out), i+1+rng.IntN(16))
			out = append(out[:j], append(bytes.Clone(out[i:j]), out[j:]...)...)
		case 5: // overwrite with punctuation
			const punct = `{}[]:,"\ntrue-0e`
			out[i] = punct[rng.IntN(len(punct))]
		case 6: // random bytes
			n := 1 + rng.IntN(16)
			r := make([]byte, n)
			for k := range r {
				r[k] = byte(rng.IntN(256))
			}
			out = append(out[:i], append(r, out[i:]...)...)
		}
	}
	return out
}

// randomBytes returns n random bytes.
func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

// nested returns depth levels of open, then inner, then depth levels of close.
func nested(open, inner, closing string, depth int) string {
	return strings.Repeat(open, depth) + inner + strings.Repeat(closing, depth)
}

// protoVarint appends v as a protobuf varint.
func protoVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// protoBytes appends field num as a length-delimited field.
func protoBytes(b []byte, num int, data []byte) []byte {
	b = protoVarint(b, uint64(num)<<3|2)
	b = protoVarint(b, uint64(len(data)))
	return append(b, data...)
}

// protoUnknown builds a Kubernetes protobuf envelope (runtime.Unknown) around raw.
func protoUnknown(apiVersion, kind string, raw []byte) []byte {
	var tm []byte
	tm = protoBytes(tm, 1, []byte(apiVersion))
	tm = protoBytes(tm, 2, []byte(kind))
	b := bytes.Clone(k8sMagic)
	b = protoBytes(b, 1, tm)
	b = protoBytes(b, 2, raw)
	return b
}
