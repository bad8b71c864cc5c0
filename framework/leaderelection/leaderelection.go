package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// Defaults.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// ErrLost is returned by Renew when the lease could not be renewed within
// RenewDeadline or was taken by another holder.
var ErrLost = errors.New("leaderelection: leadership lost")

// Client is what an Elector needs; *client.Client implements it.
type Client interface {
	Get(ctx context.Context, key client.ObjectKey, obj api.Object) error
	Create(ctx context.Context, obj api.Object, opts ...client.CreateOption) error
	Update(ctx context.Context, obj api.Object, opts ...client.UpdateOption) error
}

// Config configures an Elector. Client, Namespace, Name and Identity are
// required; zero durations mean the defaults.
type Config struct {
	Client    Client
	Namespace string
	Name      string
	// Identity names this candidate (unique among candidates, e.g.
	// hostname_uuid).
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Logger        logr.Logger
}

func (c *Config) complete() {
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = DefaultRenewDeadline
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = DefaultRetryPeriod
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.Client == nil {
		errs = append(errs, errors.New("leaderelection: Client is required"))
	}
	if c.Namespace == "" || c.Name == "" {
		errs = append(errs, errors.New("leaderelection: lease Namespace and Name are required"))
	}
	if c.Identity == "" {
		errs = append(errs, errors.New("leaderelection: Identity is required"))
	}
	if c.LeaseDuration%time.Second != 0 {
		errs = append(errs, errors.New("leaderelection: LeaseDuration must be a whole number of seconds (the Lease stores seconds)"))
	}
	if c.LeaseDuration <= c.RenewDeadline {
		errs = append(errs, errors.New("leaderelection: LeaseDuration must be greater than RenewDeadline"))
	}
	if c.RenewDeadline <= c.RetryPeriod {
		errs = append(errs, errors.New("leaderelection: RenewDeadline must be greater than RetryPeriod"))
	}
	if c.RetryPeriod <= 0 {
		errs = append(errs, errors.New("leaderelection: RetryPeriod must be positive"))
	}
	return errors.Join(errs...)
}

// Elector takes part in the election of one Lease.
type Elector struct {
	cfg Config
	log logr.Logger

	// Observation of the lease record, used by one goroutine at a time.
	observed     leaseSpec
	observedRV   string
	observedTime time.Time
	// renewedAt is when the last successful acquisition or renewal started.
	renewedAt time.Time

	leader atomic.Bool
}

// New returns an Elector for cfg.
func New(cfg Config) (*Elector, error) {
	cfg.complete()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Elector{cfg: cfg, log: cfg.Logger.WithValues("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity)}, nil
}

// IsLeader reports whether this candidate currently holds the lease (as of
// its last successful write).
func (e *Elector) IsLeader() bool { return e.leader.Load() }

// Acquire blocks until this candidate holds the lease (nil) or ctx ends
// (ctx.Err()). It tries every RetryPeriod.
func (e *Elector) Acquire(ctx context.Context) error {
	e.log.Info("Attempting to acquire leader lease")
	for {
		ok, err := e.tryAcquireOrRenew(ctx)
		if err != nil && ctx.Err() == nil {
			e.log.V(1).Info("Failed to acquire lease", "reason", err.Error())
		}
		if ok {
			e.log.Info("Acquired leader lease")
			return nil
		}
		if err := sleep(ctx, e.cfg.RetryPeriod); err != nil {
			return err
		}
	}
}

// Renew keeps the lease until ctx ends (then it returns nil without releasing:
// call Release once the work that needed leadership has stopped) or until the
// lease cannot be renewed within RenewDeadline (ErrLost).
//
// RenewDeadline is counted from the start of the last successful renewal, the
// earliest moment from which other candidates count LeaseDuration, so a leader
// that cannot reach the server gives up at least LeaseDuration-RenewDeadline
// before anyone may take over, whatever RetryPeriod is. A request still pending
// at the deadline is cancelled.
func (e *Elector) Renew(ctx context.Context) error {
	for {
		if err := sleep(ctx, e.cfg.RetryPeriod); err != nil {
			return nil
		}
		deadline := e.renewedAt.Add(e.cfg.RenewDeadline)
		for {
			rctx, cancel := context.WithDeadline(ctx, deadline)
			ok, err := e.tryAcquireOrRenew(rctx)
			cancel()
			if ok {
				break
			}
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				e.log.V(1).Info("Failed to renew lease", "reason", err.Error())
			}
			takenOver := e.observed.HolderIdentity != nil && *e.observed.HolderIdentity != "" &&
				*e.observed.HolderIdentity != e.cfg.Identity
			if takenOver || !time.Now().Add(e.cfg.RetryPeriod).Before(deadline) {
				e.leader.Store(false)
				e.log.Info("Lost leader lease", "lastRenewal", e.renewedAt)
				return ErrLost
			}
			if err := sleep(ctx, e.cfg.RetryPeriod); err != nil {
				return nil
			}
		}
	}
}

// Release gives the lease up if this candidate holds it, so that another
// candidate can take it at once. It is a no-op otherwise.
func (e *Elector) Release(ctx context.Context) error {
	if !e.leader.Load() {
		return nil
	}
	e.leader.Store(false)
	l := newLease(e.cfg.Namespace, e.cfg.Name)
	if err := e.cfg.Client.Get(ctx, client.ObjectKeyFromObject(l), l); err != nil {
		return fmt.Errorf("leaderelection: release: %w", client.IgnoreNotFound(err))
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != e.cfg.Identity {
		return nil
	}
	now := api.NowMicro()
	l.Spec.HolderIdentity = api.Ptr("")
	l.Spec.LeaseDurationSeconds = api.Ptr(int32(1))
	l.Spec.RenewTime, l.Spec.AcquireTime = &now, &now
	if err := e.cfg.Client.Update(ctx, l); err != nil {
		return fmt.Errorf("leaderelection: release: %w", err)
	}
	e.log.Info("Released leader lease")
	return nil
}

// tryAcquireOrRenew makes one attempt and reports whether this candidate holds
// the lease afterwards.
func (e *Elector) tryAcquireOrRenew(ctx context.Context) (bool, error) {
	now := time.Now()
	nowMicro := api.NowMicro()
	l := newLease(e.cfg.Namespace, e.cfg.Name)
	err := e.cfg.Client.Get(ctx, client.ObjectKeyFromObject(l), l)
	switch {
	case apierrors.IsNotFound(err):
		l = newLease(e.cfg.Namespace, e.cfg.Name)
		l.Spec = e.spec(nowMicro, nowMicro, 0)
		if err := e.cfg.Client.Create(ctx, l); err != nil {
			return false, err
		}
		e.observe(l, now)
		e.renewedAt = now
		e.leader.Store(true)
		return true, nil
	case err != nil:
		return false, err
	}

	if l.ResourceVersion != e.observedRV {
		e.observe(l, now)
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		holder = *l.Spec.HolderIdentity
	}
	duration := e.cfg.LeaseDuration
	if l.Spec.LeaseDurationSeconds != nil {
		duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if holder != "" && holder != e.cfg.Identity && now.Before(e.observedTime.Add(duration)) {
		e.leader.Store(false)
		return false, nil
	}

	transitions := int32(0)
	if l.Spec.LeaseTransitions != nil {
		transitions = *l.Spec.LeaseTransitions
	}
	acquire := nowMicro
	if holder == e.cfg.Identity && l.Spec.AcquireTime != nil {
		acquire = *l.Spec.AcquireTime
	} else {
		transitions++
	}
	l.Spec = e.spec(acquire, nowMicro, transitions)
	if err := e.cfg.Client.Update(ctx, l); err != nil { // carries the resourceVersion read: Conflict if it changed
		return false, err
	}
	e.observe(l, now)
	e.renewedAt = now
	e.leader.Store(true)
	return true, nil
}

func (e *Elector) spec(acquire, renew api.MicroTime, transitions int32) leaseSpec {
	return leaseSpec{
		HolderIdentity:       api.Ptr(e.cfg.Identity),
		LeaseDurationSeconds: api.Ptr(int32(e.cfg.LeaseDuration / time.Second)),
		AcquireTime:          &acquire,
		RenewTime:            &renew,
		LeaseTransitions:     &transitions,
	}
}

func (e *Elector) observe(l *lease, now time.Time) {
	e.observed, e.observedRV, e.observedTime = l.Spec, l.ResourceVersion, now
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
