package v1_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/testenv"
)

func TestOneEventResource(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "core/v1 and events.k8s.io/v1 Events as one resource")
}

const (
	corePath   = "/api/v1/namespaces/default/events"
	eventsPath = "/apis/events.k8s.io/v1/namespaces/default/events"
)

// env is an API server alone (no controllers, no node agent): only the specs
// write events.
var env *testenv.Environment

var _ = BeforeSuite(func() {
	var err error
	env, err = testenv.Start(context.Background(), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})

// call sends a JSON request and returns the status code and decoded body.
func call(method, path, contentType string, body any) (int, map[string]any) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		Expect(err).NotTo(HaveOccurred())
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, env.URL+path, r)
	Expect(err).NotTo(HaveOccurred())
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	var out map[string]any
	Expect(json.NewDecoder(resp.Body).Decode(&out)).To(Succeed())
	return resp.StatusCode, out
}

func names(list map[string]any) []string {
	var out []string
	for _, it := range list["items"].([]any) {
		out = append(out, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
	}
	return out
}

// newStyle is an event as events.k8s.io/v1 clients write it.
func newStyle(name, pod string) map[string]any {
	return map[string]any{
		"apiVersion": "events.k8s.io/v1", "kind": "Event",
		"metadata":            map[string]any{"name": name},
		"eventTime":           "2026-01-01T00:00:00.000001Z",
		"reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
		"action": "Probe", "reason": "Checked", "type": "Normal", "note": "looked at " + pod,
		"regarding": map[string]any{"kind": "Pod", "namespace": "default", "name": pod, "apiVersion": "v1"},
	}
}

// coreStyle is an event as a core/v1 recorder writes it.
func coreStyle(name, pod string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": name},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": "default", "name": pod},
		"reason":         "Pulled", "message": "pulled for " + pod, "type": "Warning",
		"source":         map[string]any{"component": "kubelet", "host": "n1"},
		"firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:05Z", "count": 3,
	}
}

var _ = Describe("Events written through one API", func() {
	It("are read, listed by field and patched through the other", func() {
		code, created := call(http.MethodPost, eventsPath, "application/json", newStyle("new-1", "web-0"))
		Expect(code).To(Equal(http.StatusCreated), "%v", created)

		code, core := call(http.MethodGet, corePath+"/new-1", "", nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(core).To(HaveKeyWithValue("apiVersion", "v1"))
		Expect(core).To(HaveKeyWithValue("message", "looked at web-0"))
		Expect(core).To(HaveKeyWithValue("reportingComponent", "example.com/ctl"))
		Expect(core["involvedObject"]).To(HaveKeyWithValue("name", "web-0"))
		Expect(core["metadata"]).To(HaveKeyWithValue("uid", created["metadata"].(map[string]any)["uid"]))

		code, _ = call(http.MethodPost, corePath, "application/json", coreStyle("old-1", "db-0"))
		Expect(code).To(Equal(http.StatusCreated))
		code, ev := call(http.MethodGet, eventsPath+"/old-1", "", nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(ev).To(HaveKeyWithValue("apiVersion", "events.k8s.io/v1"))
		Expect(ev).To(HaveKeyWithValue("note", "pulled for db-0"))
		Expect(ev).To(HaveKeyWithValue("deprecatedCount", BeNumerically("==", 3)))
		Expect(ev["deprecatedSource"]).To(HaveKeyWithValue("component", "kubelet"))
		Expect(ev["regarding"]).To(HaveKeyWithValue("name", "db-0"))

		for _, tc := range []struct{ path, selector, want string }{
			{corePath, "involvedObject.name=web-0", "new-1"},
			{eventsPath, "regarding.name=db-0", "old-1"},
			{eventsPath, "reportingController=example.com/ctl", "new-1"},
			{corePath, "reportingComponent=example.com/ctl", "new-1"},
			{corePath, "source=kubelet", "old-1"},
			{corePath, "source=example.com/ctl", "new-1"}, // falls back to reportingComponent
			{eventsPath, "type=Warning", "old-1"},
			{corePath, "reason=Checked", "new-1"},
			{eventsPath, "reason=Pulled,regarding.kind=Pod", "old-1"},
		} {
			for _, rv := range []string{"", "0"} { // from storage and from the watch cache
				q := url.Values{"fieldSelector": {tc.selector}}
				if rv != "" {
					q.Set("resourceVersion", rv)
				}
				code, list := call(http.MethodGet, tc.path+"?"+q.Encode(), "", nil)
				Expect(code).To(Equal(http.StatusOK), "%s %s: %v", tc.path, tc.selector, list)
				Expect(names(list)).To(ConsistOf(tc.want), "%s ?fieldSelector=%s rv=%q", tc.path, tc.selector, rv)
			}
		}
		code, status := call(http.MethodGet, eventsPath+"?fieldSelector=source%3Dkubelet", "", nil)
		Expect(code).To(Equal(http.StatusBadRequest), "events.k8s.io has no source field: %v", status)

		code, patched := call(http.MethodPatch, corePath+"/new-1", "application/merge-patch+json",
			map[string]any{"series": map[string]any{"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"}})
		Expect(code).To(Equal(http.StatusOK), "%v", patched)
		code, ev = call(http.MethodGet, eventsPath+"/new-1", "", nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(ev["series"]).To(HaveKeyWithValue("count", BeNumerically("==", 2)))

		code, patched = call(http.MethodPatch, eventsPath+"/old-1", "application/merge-patch+json",
			map[string]any{"metadata": map[string]any{"labels": map[string]any{"seen": "yes"}}})
		Expect(code).To(Equal(http.StatusOK), "%v", patched)
		Expect(patched).To(HaveKeyWithValue("note", "pulled for db-0"))
		code, core = call(http.MethodGet, corePath+"/old-1", "", nil)
		Expect(code).To(Equal(http.StatusOK))
		Expect(core["metadata"].(map[string]any)["labels"]).To(HaveKeyWithValue("seen", "yes"))
		Expect(core).To(HaveKeyWithValue("count", BeNumerically("==", 3)))

		// Server-side apply through either API over an event of the other.
		code, applied := call(http.MethodPatch, eventsPath+"/old-1?fieldManager=tester", "application/apply-patch+yaml",
			map[string]any{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": map[string]any{"name": "old-1",
				"annotations": map[string]any{"applied": "events"}}})
		Expect(code).To(Equal(http.StatusOK), "%v", applied)
		code, applied = call(http.MethodPatch, corePath+"/new-1?fieldManager=tester", "application/apply-patch+yaml",
			map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": "new-1",
				"annotations": map[string]any{"applied": "core"}}})
		Expect(code).To(Equal(http.StatusOK), "%v", applied)
		Expect(applied).To(HaveKeyWithValue("message", "looked at web-0"))

		code, _ = call(http.MethodDelete, eventsPath+"/new-1", "", nil)
		Expect(code).To(Equal(http.StatusOK))
		code, _ = call(http.MethodGet, corePath+"/new-1", "", nil)
		Expect(code).To(Equal(http.StatusNotFound))
		code, _ = call(http.MethodDelete, corePath+"/old-1", "", nil)
		Expect(code).To(Equal(http.StatusOK))
	})

	It("are watched through both APIs, each in its own form", func() {
		_, list := call(http.MethodGet, corePath, "", nil)
		rv := list["metadata"].(map[string]any)["resourceVersion"].(string)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		coreWatch := watch(ctx, corePath+"?watch=1&fieldSelector=involvedObject.name%3Dwatched&resourceVersion="+rv)
		eventsWatch := watch(ctx, eventsPath+"?watch=1&fieldSelector=regarding.name%3Dwatched&resourceVersion="+rv)

		code, _ := call(http.MethodPost, eventsPath, "application/json", newStyle("w-new", "watched"))
		Expect(code).To(Equal(http.StatusCreated))
		code, _ = call(http.MethodPost, corePath, "application/json", coreStyle("w-old", "watched"))
		Expect(code).To(Equal(http.StatusCreated))
		code, _ = call(http.MethodPost, corePath, "application/json", coreStyle("w-other", "unwatched"))
		Expect(code).To(Equal(http.StatusCreated))
		code, _ = call(http.MethodDelete, corePath+"/w-new", "", nil)
		Expect(code).To(Equal(http.StatusOK))

		for _, w := range []struct {
			ch         <-chan map[string]any
			apiVersion string
		}{{coreWatch, "v1"}, {eventsWatch, "events.k8s.io/v1"}} {
			var got []string
			for range 3 {
				var e map[string]any
				Eventually(w.ch).WithTimeout(10 * time.Second).Should(Receive(&e))
				obj := e["object"].(map[string]any)
				Expect(obj).To(HaveKeyWithValue("apiVersion", w.apiVersion))
				got = append(got, fmt.Sprintf("%s %s", e["type"], obj["metadata"].(map[string]any)["name"]))
			}
			Expect(got).To(Equal([]string{"ADDED w-new", "ADDED w-old", "DELETED w-new"}), w.apiVersion)
		}
	})

	It("refuses events.k8s.io creates that lack what that API requires, with 422", func() {
		for _, tc := range []struct {
			name   string
			change func(e map[string]any)
			cause  string
		}{
			{"no eventTime", func(e map[string]any) { delete(e, "eventTime") }, "eventTime"},
			{"no reportingController", func(e map[string]any) { delete(e, "reportingController") }, "reportingController"},
			{"no reportingInstance", func(e map[string]any) { delete(e, "reportingInstance") }, "reportingInstance"},
			{"no action", func(e map[string]any) { delete(e, "action") }, "action"},
			{"bad type", func(e map[string]any) { e["type"] = "Info" }, "type"},
			{"deprecated count", func(e map[string]any) { e["deprecatedCount"] = 2 }, "count"},
		} {
			e := newStyle("bad", "p")
			tc.change(e)
			code, status := call(http.MethodPost, eventsPath, "application/json", e)
			Expect(code).To(Equal(http.StatusUnprocessableEntity), tc.name)
			Expect(status).To(HaveKeyWithValue("kind", "Status"))
			Expect(status).To(HaveKeyWithValue("reason", "Invalid"))
			Expect(status["details"].(map[string]any)["causes"]).To(ContainElement(HaveKeyWithValue("field", tc.cause)), tc.name)
		}
		// core/v1 keeps Kubernetes' looser rules: no eventTime needed, but
		// the namespace must be the object's.
		e := coreStyle("elsewhere", "p")
		e["involvedObject"].(map[string]any)["namespace"] = "other"
		code, status := call(http.MethodPost, corePath, "application/json", e)
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", status)
	})

	It("refuses events.k8s.io updates of immutable fields", func() {
		code, _ := call(http.MethodPost, eventsPath, "application/json", newStyle("imm", "p"))
		Expect(code).To(Equal(http.StatusCreated))
		code, status := call(http.MethodPatch, eventsPath+"/imm", "application/merge-patch+json", map[string]any{"note": "changed"})
		Expect(code).To(Equal(http.StatusUnprocessableEntity), "%v", status)
		// core/v1 has no such rule.
		code, status = call(http.MethodPatch, corePath+"/imm", "application/merge-patch+json", map[string]any{"message": "changed"})
		Expect(code).To(Equal(http.StatusOK), "%v", status)
	})
})

// watch starts a watch and sends its decoded events until ctx ends.
func watch(ctx context.Context, path string) <-chan map[string]any {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.URL+path, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK))
	ch := make(chan map[string]any, 16)
	go func() {
		defer GinkgoRecover()
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			var e map[string]any
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				ch <- e
			}
		}
	}()
	return ch
}
