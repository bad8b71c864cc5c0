package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/logs"
	"github.com/converge-dev/converge/builtin/node/nodeauth"
	"github.com/converge-dev/converge/framework/api"
)

// logHandler serves GET /containerLogs/{namespace}/{pod}/{container}, the
// streaming endpoints (streamserver.go), the stats, /metrics, /healthz and
// /pods (the pods the agent runs, as the kubelet's PodList); over HTTPS
// every request is authenticated and authorized as the kubelet does it
// (package nodeauth).
func (a *Agent) logHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", a.serveLogs)
	a.stats.Register(mux)
	a.streamRoutes(mux)
	mux.Handle("GET /metrics", a.Metrics())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /pods", a.servePods)
	create := func(ctx context.Context, obj api.Object) error { return a.c.Create(ctx, obj) }
	return nodeauth.New(create, a.opts.NodeName, a.log.WithName("auth")).Wrap(mux)
}

// servePods answers the pods the agent runs, as the kubelet's /pods does (a
// v1 PodList of the pod objects it last saw).
func (a *Agent) servePods(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	ws := make([]*podWorker, 0, len(a.byName))
	for _, pw := range a.byName {
		ws = append(ws, pw)
	}
	a.mu.Unlock()
	list := corev1.PodList{TypeMeta: api.TypeMeta{APIVersion: "v1", Kind: "PodList"}, Items: []corev1.Pod{}}
	for _, pw := range ws {
		pw.mu.Lock()
		pod := pw.pod
		pw.mu.Unlock()
		if pod != nil {
			list.Items = append(list.Items, *pod)
		}
	}
	slices.SortFunc(list.Items, func(x, y corev1.Pod) int {
		return strings.Compare(x.Namespace+"/"+x.Name, y.Namespace+"/"+y.Name)
	})
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&list); err != nil {
		a.log.V(1).Info("Writing /pods failed", "error", err.Error())
	}
}

func (a *Agent) serveLogs(w http.ResponseWriter, r *http.Request) {
	ns, podName, name := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	opts, err := logs.ParseQuery(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pw := a.worker(ns, podName)
	if pw == nil {
		http.Error(w, fmt.Sprintf("pod %q in namespace %q is not running on node %q", podName, ns, a.opts.NodeName), http.StatusNotFound)
		return
	}
	var cr *containerRunner
	for _, c := range pw.runners() {
		if c.c.Name == name {
			cr = c
		}
	}
	if cr == nil {
		http.Error(w, fmt.Sprintf("container %q in pod %q is not valid", name, podName), http.StatusNotFound)
		return
	}
	cr.mu.Lock()
	attempt, id, hasRun := cr.attempt, cr.id, cr.id != ""
	cr.mu.Unlock()
	if !hasRun {
		http.Error(w, fmt.Sprintf("container %q in pod %q is waiting to start", name, podName), http.StatusBadRequest)
		return
	}
	path := cr.logPath(attempt)
	running := func() bool {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		return cr.running && cr.id == id
	}
	if opts.Previous {
		if attempt == 0 {
			http.Error(w, fmt.Sprintf("previous terminated container %q in pod %q not found", name, podName), http.StatusBadRequest)
			return
		}
		path = cr.logPath(attempt - 1)
		running = func() bool { return false }
	}
	if _, err := os.Stat(path); err != nil {
		http.Error(w, fmt.Sprintf("log of container %q in pod %q: %v", name, podName, err), http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if err := logs.Write(r.Context(), w, path, opts, running); err != nil && !strings.Contains(err.Error(), "broken pipe") {
		a.log.V(1).Info("Serving logs failed", "pod", ns+"/"+podName, "container", name, "error", err.Error())
	}
}
