package dashboard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ControllerStats are one controller's reconcile counters, from the metrics
// the framework keeps (controller_runtime_*), with rates over the last
// sampling interval.
type ControllerStats struct {
	Name          string  `json:"name"`
	Reconciles    float64 `json:"reconciles"`
	Errors        float64 `json:"errors"`
	Panics        float64 `json:"panics"`
	ActiveWorkers float64 `json:"activeWorkers"`
	Rate          float64 `json:"ratePerSecond"`
	ErrorRate     float64 `json:"errorsPerSecond"`
}

// statsInterval is how often GET /ui/controllers sends a sample.
const statsInterval = 2 * time.Second

// SetMetrics gives the dashboard the controller manager's metrics when it
// runs in the same process (nil: the controllers page says it cannot see
// them). Safe to call while serving.
func (d *Dashboard) SetMetrics(g prometheus.Gatherer) { d.metrics.Store(&g) }

// controllers streams the controllers' counters (one JSON line every
// statsInterval on one response) to users the API server allows to get
// /metrics.
func (d *Dashboard) controllers(w http.ResponseWriter, r *http.Request, s *session, api http.Handler) {
	if allowed, err := d.mayGetMetrics(r, s, api); err != nil {
		writeStatus(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	} else if !allowed {
		writeStatus(w, http.StatusForbidden, "Forbidden", `User "`+s.user.Name+`" cannot get path "/metrics": the controllers' metrics need it`)
		return
	}
	g := d.metrics.Load()
	if g == nil || *g == nil {
		writeStatus(w, http.StatusNotFound, "NotFound", "the controller manager runs in another process: its metrics are on its own /metrics endpoint")
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	prev := map[string]ControllerStats{}
	tick := time.NewTicker(statsInterval)
	defer tick.Stop()
	last := time.Now()
	for {
		stats, err := controllerStats(*g)
		if err != nil {
			d.opts.Logger.Error(err, "Gather controller metrics")
			return
		}
		now := time.Now()
		if dt := now.Sub(last).Seconds(); dt > 0 {
			for i, c := range stats {
				if p, ok := prev[c.Name]; ok {
					stats[i].Rate = (c.Reconciles - p.Reconciles) / dt
					stats[i].ErrorRate = (c.Errors - p.Errors) / dt
				}
			}
		}
		last = now
		for _, c := range stats {
			prev[c.Name] = c
		}
		if err := enc.Encode(map[string]any{"time": now.UTC().Format(time.RFC3339), "controllers": stats}); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// mayGetMetrics asks the API server, as the session's user, whether they may
// get /metrics (a SelfSubjectAccessReview).
func (d *Dashboard) mayGetMetrics(r *http.Request, s *session, api http.Handler) (bool, error) {
	body := []byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/metrics","verb":"get"}}}`)
	req := asUser(r, s, http.MethodPost, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code == http.StatusForbidden || rec.Code == http.StatusUnauthorized {
		return false, nil
	}
	var review struct {
		Status struct{ Allowed bool } `json:"status"`
	}
	if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
		return false, fmt.Errorf("self subject access review: %d %s", rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil {
		return false, err
	}
	return review.Status.Allowed, nil
}

// controllerStats reads the controller_runtime_* series of g.
func controllerStats(g prometheus.Gatherer) ([]ControllerStats, error) {
	fams, err := g.Gather()
	if err != nil {
		return nil, err
	}
	by := map[string]*ControllerStats{}
	get := func(name string) *ControllerStats {
		c, ok := by[name]
		if !ok {
			c = &ControllerStats{Name: name}
			by[name] = c
		}
		return c
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			var name string
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" {
					name = l.GetValue()
				}
			}
			if name == "" {
				continue
			}
			switch f.GetName() {
			case "controller_runtime_reconcile_total":
				get(name).Reconciles += m.GetCounter().GetValue()
			case "controller_runtime_reconcile_errors_total":
				get(name).Errors += m.GetCounter().GetValue()
			case "controller_runtime_reconcile_panics_total":
				get(name).Panics += m.GetCounter().GetValue()
			case "controller_runtime_active_workers":
				get(name).ActiveWorkers += m.GetGauge().GetValue()
			}
		}
	}
	out := make([]ControllerStats, 0, len(by))
	for _, c := range by {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b ControllerStats) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out, nil
}
