package loader

import (
	"cmp"
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/operators/webhook"
)

// Superseded is the state of a plugin left out at start because a newer
// build of the same operator (the same main package) is in the directory.
const Superseded State = "Superseded"

// ControllerStats are a controller's reconcile counters, read from the
// manager's metrics (controller_runtime_reconcile_total and _errors_total).
type ControllerStats struct {
	Name       string  `json:"name"`
	Reconciles float64 `json:"reconciles"`
	Errors     float64 `json:"errors"`
	// Rate is reconciles per second since the previous report.
	Rate float64 `json:"rate"`
	// LastError is the message of the controller's last failed reconcile
	// ("" when none failed), at LastErrorTime.
	LastError     string    `json:"lastError,omitempty"`
	LastErrorTime time.Time `json:"lastErrorTime,omitzero"`
}

// Loader installs operator plugins into one manager: those present at start
// (Start) and those dropped into the plugin directory later (Watch). Go
// plugins cannot be unloaded, so a plugin whose operator (main package) is
// already loaded is refused with a message that a restart is needed, and a
// loaded plugin file that changes on disk is reported, not reloaded.
// A Loader is safe for concurrent use.
type Loader struct {
	mgr  *manager.Manager
	opts Options
	log  logr.Logger

	mu       sync.Mutex // guards the fields below
	reports  []Report
	names    map[string]string   // operator name → plugin path
	mains    map[string]string   // main package path → plugin path
	files    map[string]fileStat // plugin path → file when handled
	pending  map[string]fileStat // new file → last observation (loaded once stable)
	lastSeen map[string]float64  // controller → reconciles at the previous Reports
	lastAt   time.Time
}

type fileStat struct {
	size int64
	mod  time.Time
}

// New returns a Loader for mgr.
func New(mgr *manager.Manager, opts Options) *Loader {
	return &Loader{mgr: mgr, opts: opts, log: opts.Logger.WithName("operator"), names: map[string]string{},
		mains: map[string]string{}, files: map[string]fileStat{}, pending: map[string]fileStat{}, lastSeen: map[string]float64{}}
}

// Start installs the plugins of the directory and Paths (see the package
// function Start) and returns their reports. Of several builds of one
// operator in the directory, only the newest (by modification time) is
// loaded; the others are reported as Superseded.
func (l *Loader) Start(ctx context.Context) []Report {
	paths, err := Plugins(l.opts)
	if err != nil {
		l.log.Error(err, "List operator plugins", "dir", l.opts.Dir)
	}
	if l.opts.Dir != "" {
		if _, err := os.Stat(l.opts.Dir); err != nil && !os.IsNotExist(err) {
			l.log.Error(err, "Read operator plugin directory", "dir", l.opts.Dir)
		}
	}
	newest := map[string]string{} // main package → newest path
	for _, p := range paths {
		main := mainPackage(p)
		if main == "" {
			continue
		}
		if have, ok := newest[main]; !ok || stat(p).mod.After(stat(have).mod) {
			newest[main] = p
		}
	}
	var out []Report
	for _, p := range paths {
		if main := mainPackage(p); main != "" && newest[main] != p {
			r := Report{Path: p, State: Superseded, Time: time.Now(), Build: buildSummary(p),
				Error: fmt.Sprintf("superseded by the newer build %s of the same operator (%s)", newest[main], main)}
			l.log.Info("Operator plugin superseded by a newer build", "path", p, "newer", newest[main])
			l.add(p, r)
			out = append(out, r)
			continue
		}
		out = append(out, l.install(ctx, p))
	}
	return out
}

func (l *Loader) add(path string, r Report) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reports = append(l.reports, r)
	l.files[path] = stat(path)
}

// install loads and installs one plugin and records its report.
func (l *Loader) install(ctx context.Context, p string) Report {
	r := Report{Path: p, State: Failed, Time: time.Now(), Build: buildSummary(p)}
	main := mainPackage(p)
	l.mu.Lock()
	first, dupMain := l.mains[main]
	l.mu.Unlock()
	var err error
	if dupMain && main != "" {
		err = fmt.Errorf("operator %s is already loaded from %s: loading another build of it needs a restart of the control plane "+
			"(Go plugins cannot be unloaded; converge up loads the newest build at start)", main, first)
	} else {
		before := controllerNames(l.mgr.Registry())
		op, lerr := Load(p)
		err = lerr
		if err == nil {
			r.Name = op.Name()
			l.mu.Lock()
			firstName, dup := l.names[r.Name]
			l.mu.Unlock()
			if dup {
				err = fmt.Errorf("operator %s from %s is already loaded from %s: a restart is needed to load another build (Go plugins cannot be unloaded)",
					r.Name, p, firstName)
			} else {
				l.mu.Lock()
				l.names[r.Name] = p
				if main != "" {
					l.mains[main] = p
				}
				l.mu.Unlock()
				wopts := l.opts.Webhooks
				wopts.Logger = l.log.WithName(r.Name)
				err = webhook.Install(ctx, l.mgr, op, wopts)
				for _, c := range controllerNames(l.mgr.Registry()) {
					if !slices.Contains(before, c) {
						r.Controllers = append(r.Controllers, ControllerStats{Name: c})
					}
				}
			}
		}
	}
	if err != nil {
		r.Error = err.Error()
		l.log.Error(err, "Operator failed; the control plane keeps running without it", "operator", r.Name, "path", p)
	} else {
		r.State = Running
		l.log.WithName(r.Name).Info("Operator started", "path", p)
	}
	l.add(p, r)
	return r
}

// Reports returns every plugin's report in load order, with its
// controllers' reconcile counters and rates since the previous call.
func (l *Loader) Reports() []Report {
	totals := reconcileTotals(l.mgr.Registry())
	lastErrs := lastErrors(l.mgr.Runnables())
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	elapsed := now.Sub(l.lastAt).Seconds()
	out := slices.Clone(l.reports)
	for i := range out {
		out[i].Controllers = slices.Clone(out[i].Controllers)
		for j := range out[i].Controllers {
			c := &out[i].Controllers[j]
			t := totals[c.Name]
			c.Reconciles, c.Errors = t[0], t[1]
			if e, ok := lastErrs[c.Name]; ok {
				c.LastError, c.LastErrorTime = e.msg, e.at
			}
			if prev, ok := l.lastSeen[c.Name]; ok && elapsed > 0 {
				c.Rate = (t[0] - prev) / elapsed
			}
			l.lastSeen[c.Name] = t[0]
		}
	}
	l.lastAt = now
	return out
}

// WatchOptions configure Watch.
type WatchOptions struct {
	// Interval between two looks at the directory (default 200ms). A new
	// file is loaded at the first look when it is a whole Go binary (its
	// build info reads), else once two looks in a row see the same size and
	// modification time.
	Interval time.Duration
	// StatusInterval is how often the reports (with reconcile counters) are
	// published (default 10s).
	StatusInterval time.Duration
	// Client publishes the reports (loader.Publish); nil: not published.
	Client *client.Client
}

// Watch loads plugins dropped into the directory until ctx ends, and
// publishes the reports (an Event for each new one) on every change and
// every StatusInterval. It always returns nil.
func (l *Loader) Watch(ctx context.Context, opts WatchOptions) error {
	interval := cmp.Or(opts.Interval, 200*time.Millisecond)
	status := time.NewTicker(cmp.Or(opts.StatusInterval, 10*time.Second))
	defer status.Stop()
	look := time.NewTicker(interval)
	defer look.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-status.C:
			l.publish(ctx, opts.Client, nil)
		case <-look.C:
			if fresh := l.scan(ctx); len(fresh) > 0 {
				l.publish(ctx, opts.Client, fresh)
			}
		}
	}
}

// scan installs the new stable files of the directory and reports loaded
// files that changed on disk; it returns the new reports.
func (l *Loader) scan(ctx context.Context) []Report {
	if l.opts.Dir == "" {
		return nil
	}
	matches, _ := filepath.Glob(filepath.Join(l.opts.Dir, "*.so"))
	slices.Sort(matches)
	var fresh []Report
	for _, p := range matches {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		st := stat(abs)
		l.mu.Lock()
		had, handled := l.files[abs]
		last, seen := l.pending[abs]
		l.mu.Unlock()
		switch {
		case handled && (had.size != st.size || !had.mod.Equal(st.mod)):
			r := Report{Path: abs, State: Failed, Time: time.Now(), Build: buildSummary(abs),
				Error: "the plugin file changed on disk after it was loaded: restart the control plane to load the new build (Go plugins cannot be unloaded)"}
			l.log.Error(nil, "Loaded operator plugin changed on disk; restart to load it", "path", abs)
			l.add(abs, r)
			fresh = append(fresh, r)
		case handled:
		case seen && last == st, !seen && complete(abs):
			l.mu.Lock()
			delete(l.pending, abs)
			l.mu.Unlock()
			fresh = append(fresh, l.install(ctx, abs))
		default:
			l.mu.Lock()
			l.pending[abs] = st
			l.mu.Unlock()
		}
	}
	return fresh
}

func (l *Loader) publish(ctx context.Context, c *client.Client, fresh []Report) {
	reports := l.Reports()
	if c == nil || len(reports) == 0 {
		return
	}
	if err := publish(ctx, c, reports, fresh, l.log); err != nil {
		l.log.Error(err, "Publish operator status")
	}
}

// Watcher returns Watch as a manager Runnable that runs without leader
// election (every instance loads the same plugins).
func (l *Loader) Watcher(opts WatchOptions) manager.Runnable { return watcher{l, opts} }

type watcher struct {
	l    *Loader
	opts WatchOptions
}

func (w watcher) Start(ctx context.Context) error { return w.l.Watch(ctx, w.opts) }
func (w watcher) NeedLeaderElection() bool        { return false }

func stat(p string) fileStat {
	fi, err := os.Stat(p)
	if err != nil {
		return fileStat{}
	}
	return fileStat{size: fi.Size(), mod: fi.ModTime()}
}

// complete reports whether p is a whole Go binary: its build info reads,
// which needs the section headers at the end of the file, so a plugin still
// being copied is not (it is loaded once two looks agree).
func complete(p string) bool {
	_, err := buildinfo.ReadFile(p)
	return err == nil
}

// mainPackage returns the plugin's main package path from its build info
// ("" when unreadable).
func mainPackage(p string) string {
	bi, err := buildinfo.ReadFile(p)
	if err != nil {
		return ""
	}
	return bi.Path
}

// buildSummary is "<main module>@<version> (<go version>)".
func buildSummary(p string) string {
	bi, err := buildinfo.ReadFile(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s@%s (%s)", bi.Main.Path, cmp.Or(bi.Main.Version, "(devel)"), bi.GoVersion)
}

// controllerNames lists the controllers with metrics in reg (a controller's
// series exist from its creation).
func controllerNames(reg *prometheus.Registry) []string {
	var out []string
	for name := range reconcileTotals(reg) {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// reconcileTotals returns controller → {reconciles, errors}.
func reconcileTotals(reg *prometheus.Registry) map[string][2]float64 {
	out := map[string][2]float64{}
	if reg == nil {
		return out
	}
	mfs, err := reg.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		var idx int
		switch mf.GetName() {
		case "controller_runtime_reconcile_total":
			idx = 0
		case "controller_runtime_reconcile_errors_total":
			idx = 1
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "controller" {
					v := out[lp.GetValue()]
					v[idx] += m.GetCounter().GetValue()
					out[lp.GetValue()] = v
				}
			}
		}
	}
	return out
}

// lastError is a controller's last reconcile error.
type lastError struct {
	msg string
	at  time.Time
}

// lastErrors returns, by controller name, the last reconcile error of the
// controllers among rs (framework/controller's LastError).
func lastErrors(rs []manager.Runnable) map[string]lastError {
	out := map[string]lastError{}
	for _, r := range rs {
		c, ok := r.(interface {
			Name() string
			LastError() (string, time.Time)
		})
		if !ok {
			continue
		}
		if msg, at := c.LastError(); msg != "" {
			out[c.Name()] = lastError{msg, at}
		}
	}
	return out
}
