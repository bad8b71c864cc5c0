package defaultservicecidr

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/go-logr/logr"

	networkingv1 "github.com/converge-dev/converge/builtin/api/networking/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Name is the default ServiceCIDR's name.
const Name = "kubernetes"

// ReadyMessage is the message of the Ready condition the Reconciler sets.
const ReadyMessage = "Kubernetes default Service CIDR is ready"

// DefaultInterval is how often a Reconciler checks the object (Kubernetes'
// endpoint reconciler interval).
const DefaultInterval = 10 * time.Second

// Client is the part of the API client a Reconciler uses.
type Client interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Status() client.StatusWriter
}

// Options configure a Reconciler. Client and CIDRs are required.
type Options struct {
	Client Client
	// CIDRs are the configured service ranges (one per IP family).
	CIDRs []netip.Prefix
	// Interval between passes (default DefaultInterval).
	Interval time.Duration
	Logger   logr.Logger
	// Now returns the time of a condition's transition (default time.Now).
	Now func() time.Time
}

// Reconciler keeps the default ServiceCIDR. Sync and Start must not run
// concurrently.
type Reconciler struct {
	opts                 Options
	cidrs                []string
	reportedMismatch     bool
	reportedNotReadyOnce bool
}

// New returns a Reconciler for opts.
func New(opts Options) (*Reconciler, error) {
	if opts.Client == nil {
		return nil, errors.New("defaultservicecidr: a client is required")
	}
	if len(opts.CIDRs) == 0 || len(opts.CIDRs) > 2 {
		return nil, fmt.Errorf("defaultservicecidr: want one or two CIDRs, got %d", len(opts.CIDRs))
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Reconciler{opts: opts}
	for _, p := range opts.CIDRs {
		r.cidrs = append(r.cidrs, p.Masked().String())
	}
	return r, nil
}

// Start runs Sync every Interval until ctx ends; failed passes are logged.
func (r *Reconciler) Start(ctx context.Context) error {
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := r.Sync(ctx); err != nil && ctx.Err() == nil {
				r.opts.Logger.Error(err, "Sync of the default ServiceCIDR failed")
			}
		}
	}
}

// Sync runs one pass: create the object when missing, then set its Ready
// condition when due.
func (r *Reconciler) Sync(ctx context.Context) error {
	cur := &networkingv1.ServiceCIDR{}
	err := r.opts.Client.Get(ctx, client.ObjectKey{Name: Name}, cur)
	if apierrors.IsNotFound(err) {
		cur = &networkingv1.ServiceCIDR{ObjectMeta: api.ObjectMeta{Name: Name}, Spec: networkingv1.ServiceCIDRSpec{CIDRs: r.cidrs}}
		r.opts.Logger.Info("Creating the default ServiceCIDR", "cidrs", r.cidrs)
		err = r.opts.Client.Create(ctx, cur)
		if apierrors.IsAlreadyExists(err) {
			return nil // another API server was first; the next pass sees it
		}
	}
	if err != nil {
		return fmt.Errorf("get or create ServiceCIDR %s: %w", Name, err)
	}
	return r.syncStatus(ctx, cur)
}

func (r *Reconciler) syncStatus(ctx context.Context, cur *networkingv1.ServiceCIDR) error {
	if cur.DeletionTimestamp != nil {
		return nil
	}
	if !slices.Equal(cur.Spec.CIDRs, r.cidrs) {
		if !r.reportedMismatch {
			r.opts.Logger.Info("The default ServiceCIDR does not match this API server's service CIDR; configure the flag to match or delete the object",
				"serviceCIDR", cur.Spec.CIDRs, "configured", r.cidrs)
			r.reportedMismatch = true
		}
		return nil
	}
	i := slices.IndexFunc(cur.Status.Conditions, func(c api.Condition) bool { return c.Type == networkingv1.ServiceCIDRConditionReady })
	switch {
	case i >= 0 && cur.Status.Conditions[i].Status == api.ConditionTrue:
		return nil
	case i >= 0 && cur.Status.Conditions[i].Status == api.ConditionFalse:
		if !r.reportedNotReadyOnce {
			r.opts.Logger.Info("The default ServiceCIDR's Ready condition is False although it matches the configuration", "reason", cur.Status.Conditions[i].Reason, "message", cur.Status.Conditions[i].Message)
			r.reportedNotReadyOnce = true
		}
		return nil
	}
	ready := api.Condition{Type: networkingv1.ServiceCIDRConditionReady, Status: api.ConditionTrue,
		Message: ReadyMessage, LastTransitionTime: api.NewTime(r.opts.Now())}
	if i >= 0 {
		cur.Status.Conditions[i] = ready
	} else {
		cur.Status.Conditions = append(cur.Status.Conditions, ready)
	}
	if err := r.opts.Client.Status().Update(ctx, cur); err != nil {
		return fmt.Errorf("set the Ready condition of ServiceCIDR %s: %w", Name, err)
	}
	return nil
}
