package flowcontrol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	flowcontrolv1 "github.com/converge-dev/converge/builtin/api/flowcontrol/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/flowcontrol"
	"github.com/converge-dev/converge/framework/client"
)

// Options configure a Reconciler.
type Options struct {
	// Client writes the objects (an identity allowed to, e.g. system:masters).
	Client *client.Client
	// Filter receives every configuration read.
	Filter *flowcontrol.Controller
	// Resync is how often the defaults are ensured again (default 1 min).
	Resync time.Duration
	Logger logr.Logger
}

// Reconciler keeps the default objects and feeds the filter.
type Reconciler struct {
	opts Options
	now  func() time.Time
}

// New returns a Reconciler.
func New(opts Options) *Reconciler {
	if opts.Resync <= 0 {
		opts.Resync = time.Minute
	}
	return &Reconciler{opts: opts, now: time.Now}
}

// Ensure creates the missing default objects and restores the spec of the
// mandatory ones and of the suggested ones whose autoupdate-spec annotation
// is "true" (or absent on an object never changed since its creation).
func (r *Reconciler) Ensure(ctx context.Context) error {
	var errs []error
	for i, pl := range append(MandatoryPriorityLevels(), SuggestedPriorityLevels()...) {
		cur := &flowcontrolv1.PriorityLevelConfiguration{}
		errs = append(errs, r.ensure(ctx, pl, cur, i < 2, func() (any, any) { return pl.Spec, cur.Spec },
			func() { cur.Spec = pl.Spec }))
	}
	for i, fs := range append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...) {
		cur := &flowcontrolv1.FlowSchema{}
		errs = append(errs, r.ensure(ctx, fs, cur, i < 2, func() (any, any) { return fs.Spec, cur.Spec },
			func() { cur.Spec = fs.Spec }))
	}
	return errors.Join(errs...)
}

// object is a FlowSchema or PriorityLevelConfiguration.
type object interface {
	api.Object
	GetAnnotations() map[string]string
	SetAnnotations(map[string]string)
	GetGeneration() int64
}

func (r *Reconciler) ensure(ctx context.Context, want, cur object, mandatory bool, specs func() (any, any), restore func()) error {
	c := r.opts.Client
	err := c.Get(ctx, client.ObjectKey{Name: want.GetName()}, cur)
	if apierrors.IsNotFound(err) {
		if err := c.Create(ctx, want); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s: %w", want.GetName(), err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", want.GetName(), err)
	}
	ann := cur.GetAnnotations()
	auto, set := ann[AnnotationAutoUpdateSpec]
	if !mandatory && auto != "true" && (set || cur.GetGeneration() > 1) {
		return nil // the users' own
	}
	a, b := specs()
	wantSpec, _ := json.Marshal(a)
	curSpec, _ := json.Marshal(b)
	if bytes.Equal(wantSpec, curSpec) && auto == "true" {
		return nil
	}
	restore()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationAutoUpdateSpec] = "true"
	cur.SetAnnotations(ann)
	if err := c.Update(ctx, cur); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("restore %s: %w", want.GetName(), err)
	}
	return nil
}

// Sync reads the objects, hands their configuration to the filter and writes
// each FlowSchema's Dangling condition.
func (r *Reconciler) Sync(ctx context.Context) error {
	c := r.opts.Client
	var schemas flowcontrolv1.FlowSchemaList
	if err := c.List(ctx, &schemas); err != nil {
		return fmt.Errorf("list flowschemas: %w", err)
	}
	var levels flowcontrolv1.PriorityLevelConfigurationList
	if err := c.List(ctx, &levels); err != nil {
		return fmt.Errorf("list prioritylevelconfigurations: %w", err)
	}
	r.opts.Filter.Update(Config(schemas.Items, levels.Items))
	exists := make(map[string]bool, len(levels.Items))
	for _, pl := range levels.Items {
		exists[pl.Name] = true
	}
	var errs []error
	for i := range schemas.Items {
		fs := &schemas.Items[i]
		if !setDangling(fs, !exists[fs.Spec.PriorityLevelConfiguration.Name], r.now()) {
			continue
		}
		if err := c.Status().Update(ctx, fs); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("write the status of flowschema %s: %w", fs.Name, err))
		}
	}
	return errors.Join(errs...)
}

// setDangling sets fs's Dangling condition as Kubernetes words it and reports
// whether it changed.
func setDangling(fs *flowcontrolv1.FlowSchema, dangling bool, now time.Time) bool {
	want := flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling,
		Status: flowcontrolv1.ConditionFalse, Reason: "Found",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists",
			fs.Spec.PriorityLevelConfiguration.Name)}
	if dangling {
		want.Status, want.Reason = flowcontrolv1.ConditionTrue, "NotFound"
		want.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object",
			fs.Spec.PriorityLevelConfiguration.Name)
	}
	for i, c := range fs.Status.Conditions {
		if c.Type != want.Type {
			continue
		}
		if c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
			return false
		}
		want.LastTransitionTime = c.LastTransitionTime
		if c.Status != want.Status {
			want.LastTransitionTime = api.NewTime(now)
		}
		fs.Status.Conditions[i] = want
		return true
	}
	want.LastTransitionTime = api.NewTime(now)
	fs.Status.Conditions = append(fs.Status.Conditions, want)
	return true
}

// Start ensures the defaults and syncs, then syncs again on every change of
// the objects (ensuring the defaults again when a default object changed) and
// ensures the defaults every Resync, until ctx ends.
func (r *Reconciler) Start(ctx context.Context) error {
	log := r.opts.Logger
	defaults := defaultNames()
	kick := make(chan struct{}, 1)
	var ensureNext atomic.Bool
	notify := func(name string) {
		if name == "" || defaults[name] {
			ensureNext.Store(true)
		}
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, list := range []client.ObjectList{&flowcontrolv1.FlowSchemaList{}, &flowcontrolv1.PriorityLevelConfigurationList{}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.watch(ctx, list, notify)
		}()
	}
	ticker := time.NewTicker(r.opts.Resync)
	defer ticker.Stop()
	ensureNext.Store(true)
	for {
		if ensureNext.Swap(false) {
			if err := r.Ensure(ctx); err != nil && ctx.Err() == nil {
				log.Error(err, "Ensuring the default FlowSchemas and PriorityLevelConfigurations failed")
			}
		}
		if err := r.Sync(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "Reading the flow control configuration failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-kick:
			// Let a burst of changes settle into one pass.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(50 * time.Millisecond):
			}
		case <-ticker.C:
			ensureNext.Store(true)
		}
	}
}

// defaultNames are the names of the default objects (of either kind).
func defaultNames() map[string]bool {
	out := map[string]bool{}
	for _, pl := range append(MandatoryPriorityLevels(), SuggestedPriorityLevels()...) {
		out[pl.Name] = true
	}
	for _, fs := range append(MandatoryFlowSchemas(), SuggestedFlowSchemas()...) {
		out[fs.Name] = true
	}
	return out
}

// watch calls notify with the object's name on every event of the list's
// kind ("" when the watch ends: anything may have changed), watching again
// after the watch ends.
func (r *Reconciler) watch(ctx context.Context, list client.ObjectList, notify func(name string)) {
	for ctx.Err() == nil {
		w, err := r.opts.Client.Watch(ctx, list)
		if err == nil {
			for ev := range w.ResultChan() {
				name := ""
				if ev.Object != nil {
					name = ev.Object.GetName()
				}
				notify(name)
			}
			w.Stop()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
		notify("")
	}
}
