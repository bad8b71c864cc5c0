package apply

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// watchFrame is one decoded watch event.
type watchFrame struct {
	Type   string `json:"type"`
	Object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// openWatch starts a watch on path with query and returns its frames; the
// watch ends with ctx.
func openWatch(ctx context.Context, path, query string) (int, <-chan watchFrame) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.URL+path+"?watch=true&"+query, nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	frames := make(chan watchFrame, 64)
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		close(frames)
		return resp.StatusCode, frames
	}
	go func() {
		defer resp.Body.Close()
		defer close(frames)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var f watchFrame
			if json.Unmarshal(sc.Bytes(), &f) == nil {
				select {
				case frames <- f:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return resp.StatusCode, frames
}

func nextFrame(frames <-chan watchFrame) watchFrame {
	GinkgoHelper()
	var f watchFrame
	Eventually(frames).Should(Receive(&f))
	return f
}

// Streaming lists (WatchList, sendInitialEvents=true), as client-go's
// reflector with WatchListClient uses them and Kubernetes 1.32+ serves them.
var _ = Describe("WatchList", func() {
	var ns, path string
	BeforeEach(func(ctx SpecContext) {
		ns = newNamespace(ctx)
		path = "/api/v1/namespaces/" + ns + "/configmaps"
		for i := range 3 {
			r := call(ctx, http.MethodPost, path, "application/json",
				map[string]any{"metadata": map[string]any{"name": fmt.Sprintf("cm%d", i)}}, "")
			Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		}
	})

	It("streams the current state, then the initial-events-end bookmark, then changes", func(ctx SpecContext) {
		// A list made before the watch: the streamed state is not older.
		list := call(ctx, http.MethodGet, path, "", nil, "")
		listRV, _ := strconv.ParseInt(list.obj["metadata"].(map[string]any)["resourceVersion"].(string), 10, 64)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		code, frames := openWatch(wctx, path, "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=")
		Expect(code).To(Equal(http.StatusOK))
		var names []string
		for range 3 {
			f := nextFrame(frames)
			Expect(f.Type).To(Equal("ADDED"))
			names = append(names, f.Object.Metadata.Name)
		}
		Expect(names).To(ConsistOf("cm0", "cm1", "cm2"))
		end := nextFrame(frames)
		Expect(end.Type).To(Equal("BOOKMARK"))
		Expect(end.Object.Kind).To(Equal("ConfigMap"))
		Expect(end.Object.Metadata.Annotations).To(HaveKeyWithValue("k8s.io/initial-events-end", "true"))
		// The bookmark's revision is the streamed state's: not older than the list before.
		endRV, _ := strconv.ParseInt(end.Object.Metadata.ResourceVersion, 10, 64)
		Expect(endRV).To(BeNumerically(">=", listRV))

		r := call(ctx, http.MethodPost, path, "application/json", map[string]any{"metadata": map[string]any{"name": "cm3"}}, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		f := nextFrame(frames)
		Expect(f.Type).To(Equal("ADDED"))
		Expect(f.Object.Metadata.Name).To(Equal("cm3"))
	})

	It("starts from a state not older than the resourceVersion given", func(ctx SpecContext) {
		r := call(ctx, http.MethodPost, path, "application/json", map[string]any{"metadata": map[string]any{"name": "late"}}, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		rv := r.obj["metadata"].(map[string]any)["resourceVersion"].(string)
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		code, frames := openWatch(wctx, path, "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion="+rv)
		Expect(code).To(Equal(http.StatusOK))
		var names []string
		for {
			f := nextFrame(frames)
			if f.Type == "BOOKMARK" {
				Expect(f.Object.Metadata.Annotations).To(HaveKeyWithValue("k8s.io/initial-events-end", "true"))
				break
			}
			names = append(names, f.Object.Metadata.Name)
		}
		Expect(names).To(ConsistOf("cm0", "cm1", "cm2", "late"))
	})

	It("sends no initial state with sendInitialEvents=false", func(ctx SpecContext) {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		code, frames := openWatch(wctx, path, "sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=0")
		Expect(code).To(Equal(http.StatusOK))
		r := call(ctx, http.MethodPost, path, "application/json", map[string]any{"metadata": map[string]any{"name": "after"}}, "")
		Expect(r.code).To(Equal(http.StatusCreated), r.raw)
		f := nextFrame(frames)
		Expect(f.Type).To(Equal("ADDED"))
		Expect(f.Object.Metadata.Name).To(Equal("after"))
	})

	DescribeTable("refuses what Kubernetes refuses", func(ctx SpecContext, query string, want int) {
		code, _ := openWatch(ctx, path, query)
		Expect(code).To(Equal(want))
	},
		Entry("sendInitialEvents without resourceVersionMatch", "sendInitialEvents=true", http.StatusUnprocessableEntity),
		Entry("resourceVersionMatch without sendInitialEvents", "resourceVersionMatch=NotOlderThan&resourceVersion=1", http.StatusUnprocessableEntity),
		Entry("resourceVersionMatch Exact", "sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1", http.StatusUnprocessableEntity),
		Entry("sendInitialEvents garbage", "sendInitialEvents=maybe&resourceVersionMatch=NotOlderThan", http.StatusBadRequest),
		Entry("a revision from the future", "sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion=999999999", http.StatusGatewayTimeout),
	)
})
