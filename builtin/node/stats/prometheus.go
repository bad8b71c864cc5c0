package stats

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// WriteResource writes the kubelet's /metrics/resource exposition (Prometheus
// text format 0.0.4) of the last readings: cumulative CPU seconds and working
// set bytes of the node, each pod and each container, with the readings'
// timestamps, and scrape_error.
func (s *Sampler) WriteResource(w io.Writer) error { return WriteResource(w, s.Summary()) }

// WriteResource writes sum in the kubelet's /metrics/resource exposition.
func WriteResource(w io.Writer, sum Summary) error {
	bw := bufio.NewWriter(w)
	family := func(name, typ, help string) {
		fmt.Fprintf(bw, "# HELP %s [STABLE] %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	sample := func(name, labels string, v float64, at time.Time) {
		if labels != "" {
			labels = "{" + labels + "}"
		}
		fmt.Fprintf(bw, "%s%s %s %d\n", name, labels, strconv.FormatFloat(v, 'g', -1, 64), at.UnixMilli())
	}
	podLabels := func(p PodStats) string {
		return `namespace="` + escape(p.PodRef.Namespace) + `",pod="` + escape(p.PodRef.Name) + `"`
	}
	ctrLabels := func(p PodStats, c ContainerStats) string {
		return `container="` + escape(c.Name) + `",` + podLabels(p)
	}

	family("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the container in core-seconds")
	for _, p := range sum.Pods {
		for _, c := range p.Containers {
			sample("container_cpu_usage_seconds_total", ctrLabels(p, c), seconds(c.CPU.UsageCoreNanoSeconds), c.CPU.Time.Time)
		}
	}
	family("container_memory_working_set_bytes", "gauge", "Current working set of the container in bytes")
	for _, p := range sum.Pods {
		for _, c := range p.Containers {
			if c.Memory.WorkingSetBytes != nil {
				sample("container_memory_working_set_bytes", ctrLabels(p, c), float64(*c.Memory.WorkingSetBytes), c.Memory.Time.Time)
			}
		}
	}
	family("container_start_time_seconds", "gauge", "Start time of the container since unix epoch in seconds")
	for _, p := range sum.Pods {
		for _, c := range p.Containers {
			sample("container_start_time_seconds", ctrLabels(p, c), float64(c.StartTime.Unix()), c.CPU.Time.Time)
		}
	}
	if n := sum.Node; n.CPU != nil {
		family("node_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the node in core-seconds")
		sample("node_cpu_usage_seconds_total", "", seconds(n.CPU.UsageCoreNanoSeconds), n.CPU.Time.Time)
		if n.Memory.WorkingSetBytes != nil {
			family("node_memory_working_set_bytes", "gauge", "Current working set of the node in bytes")
			sample("node_memory_working_set_bytes", "", float64(*n.Memory.WorkingSetBytes), n.Memory.Time.Time)
		}
	}
	family("pod_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed by the pod in core-seconds")
	for _, p := range sum.Pods {
		sample("pod_cpu_usage_seconds_total", podLabels(p), seconds(p.CPU.UsageCoreNanoSeconds), p.CPU.Time.Time)
	}
	family("pod_memory_working_set_bytes", "gauge", "Current working set of the pod in bytes")
	for _, p := range sum.Pods {
		sample("pod_memory_working_set_bytes", podLabels(p), float64(*p.Memory.WorkingSetBytes), p.Memory.Time.Time)
	}
	fmt.Fprintf(bw, "# HELP scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise\n# TYPE scrape_error gauge\nscrape_error 0\n")
	return bw.Flush()
}

func seconds(nanos *uint64) float64 {
	if nanos == nil {
		return 0
	}
	return float64(*nanos) / 1e9
}

// escape escapes a Prometheus label value.
func escape(v string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`).Replace(v)
}

// Register serves GET /metrics/resource and GET /stats/summary on mux.
func (s *Sampler) Register(mux *http.ServeMux) {
	Register(mux, func(*http.Request) (Summary, bool) { return s.Summary(), true })
}

// Register serves GET /metrics/resource and GET /stats/summary on mux from
// the Summary summary returns for a request (404 when ok is false).
func Register(mux *http.ServeMux, summary func(r *http.Request) (sum Summary, ok bool)) {
	mux.HandleFunc("GET /metrics/resource", func(w http.ResponseWriter, r *http.Request) {
		sum, ok := summary(r)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = WriteResource(w, sum)
	})
	mux.HandleFunc("GET /stats/summary", func(w http.ResponseWriter, r *http.Request) {
		sum, ok := summary(r)
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(sum)
	})
}
