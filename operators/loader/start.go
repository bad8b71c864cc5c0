package loader

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/record"
	"github.com/converge-dev/converge/operators/webhook"
)

// State of a loaded operator.
type State string

// States.
const (
	Running State = "Running"
	Failed  State = "Failed"
)

// Report is the outcome of starting one operator plugin.
type Report struct {
	// Name is the operator's name ("" when it failed before it was known).
	Name string `json:"name,omitempty"`
	// Path is the plugin file.
	Path string `json:"path"`
	// State is Running or Failed.
	State State `json:"state"`
	// Error says why it failed.
	Error string `json:"error,omitempty"`
	// Time is when it was started or failed.
	Time time.Time `json:"time"`
	// Build is the plugin's main module, version and Go version.
	Build string `json:"build,omitempty"`
	// Controllers are the controllers the operator's Setup added, with
	// their reconcile counters when the report was published.
	Controllers []ControllerStats `json:"controllers,omitempty"`
}

// Options configure Start.
type Options struct {
	// Dir is searched for *.so plugins (sorted by name); a missing Dir is
	// not an error.
	Dir string
	// Paths are more plugins (the --operator flags), loaded after Dir's.
	Paths []string
	// Logger is the host's logger; each operator logs as
	// Logger.WithName("operator").WithName(<name>).
	Logger logr.Logger
	// Webhooks configures the webhook servers of operators that declare
	// webhooks (its Issuer is the control plane's CA); see webhook.Install.
	// Its Logger is set per operator.
	Webhooks webhook.Options
}

// Plugins lists the plugin files of opts: Dir's *.so then Paths, each
// absolute path once.
func Plugins(opts Options) ([]string, error) {
	var paths []string
	if opts.Dir != "" {
		matches, err := filepath.Glob(filepath.Join(opts.Dir, "*.so"))
		if err != nil {
			return nil, err
		}
		slices.Sort(matches)
		paths = append(paths, matches...)
	}
	paths = append(paths, opts.Paths...)
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		if !seen[abs] {
			seen[abs] = true
			out = append(out, abs)
		}
	}
	return out, nil
}

// Start loads every plugin of opts and installs each into mgr (the host's
// shared manager, started or not): CRDs applied and Established, then Setup,
// then health checks (operators.Install; webhook.Install for operators with
// webhooks, which also serves and registers them). A plugin that fails to load or
// install is logged and reported as Failed; the others still start, and Start
// itself never fails. Two plugins with the same operator name: the second
// fails. Reports are in load order.
func Start(ctx context.Context, mgr *manager.Manager, opts Options) []Report {
	return New(mgr, opts).Start(ctx)
}

// StatusNamespace and StatusName locate the ConfigMap that Publish writes:
// one data key per operator (its name, or the plugin's file name when the
// name is unknown) holding its Report as JSON.
const (
	StatusNamespace = "kube-system"
	StatusName      = "converge-operators"
)

// Publish records reports where users and `converge status` see them: the
// ConfigMap kube-system/converge-operators (replaced wholesale), and a
// Warning Event "OperatorFailed" (or Normal "OperatorStarted") on that
// ConfigMap per operator. Event failures are logged, not returned.
func Publish(ctx context.Context, c *client.Client, reports []Report, log logr.Logger) error {
	return publish(ctx, c, reports, reports, log)
}

// publish writes all reports to the ConfigMap and an Event for each of
// fresh.
func publish(ctx context.Context, c *client.Client, reports, fresh []Report, log logr.Logger) error {
	data := map[string]any{}
	for _, r := range reports {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		k := reportKey(r)
		if _, taken := data[k]; taken {
			k = filepath.Base(r.Path) // a refused second build of a loaded operator
		}
		data[k] = string(b)
	}
	cm := &api.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": StatusNamespace, "name": StatusName},
		"data":     data,
	}}
	err := c.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		live := &api.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		if err = c.Get(ctx, client.ObjectKey{Namespace: StatusNamespace, Name: StatusName}, live); err == nil {
			live.Object["data"] = data
			err = c.Update(ctx, live)
			cm = live
		}
	}
	if err != nil {
		return fmt.Errorf("publish operator status: %w", err)
	}
	rec := record.New(c, "converge-operators", log)
	for _, r := range fresh {
		switch r.State {
		case Superseded:
			rec.Eventf(ctx, cm, record.Normal, "OperatorSuperseded", "operator plugin %s: %s", r.Path, r.Error)
		case Failed:
			rec.Eventf(ctx, cm, record.Warning, "OperatorFailed", "operator %s (%s) failed: %s", reportKey(r), r.Path, r.Error)
		default:
			rec.Eventf(ctx, cm, record.Normal, "OperatorStarted", "operator %s started from %s", r.Name, r.Path)
		}
	}
	return nil
}

func reportKey(r Report) string {
	if r.Name != "" {
		return r.Name
	}
	return filepath.Base(r.Path)
}

// ReadReports returns the reports Publish wrote (nil when none were).
func ReadReports(ctx context.Context, c *client.Client) ([]Report, error) {
	live := &api.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	if err := c.Get(ctx, client.ObjectKey{Namespace: StatusNamespace, Name: StatusName}, live); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	data := api.NestedStringMap(live.Object, "data")
	var out []Report
	for _, k := range slices.Sorted(maps.Keys(data)) {
		var r Report
		if err := json.Unmarshal([]byte(data[k]), &r); err != nil {
			return nil, fmt.Errorf("operator status %s: %w", k, err)
		}
		out = append(out, r)
	}
	return out, nil
}
