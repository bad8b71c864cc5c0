package quota

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/apiserver/admission"
)

// Store reads and charges the quotas of a namespace.
type Store interface {
	// List returns the quotas of namespace; it may lag the latest writes.
	List(ctx context.Context, namespace string) ([]*corev1.ResourceQuota, error)
	// Get reads one quota from the authoritative source.
	Get(ctx context.Context, namespace, name string) (*corev1.ResourceQuota, error)
	// UpdateStatus writes q.Status if q.ResourceVersion is still current and
	// returns the stored quota; a Conflict StatusError when it is not.
	UpdateStatus(ctx context.Context, q *corev1.ResourceQuota) (*corev1.ResourceQuota, error)
}

// maxChargeAttempts bounds the conflict retries of one request.
const maxChargeAttempts = 8

// Admission is the ResourceQuota admission plugin (a validating plugin; see
// the package documentation for its contract).
type Admission struct {
	store Store

	// mu guards locks and written. A namespace's lock is held while a request
	// checks and charges its quotas, so requests to one API server take turns
	// instead of conflicting; the resourceVersion check covers several
	// servers.
	mu      sync.Mutex
	locks   map[string]*nsLock
	written map[string]*corev1.ResourceQuota // last status this server wrote, by namespace/name
}

type nsLock struct {
	mu    sync.Mutex
	users int
}

// NewAdmission returns the plugin charging quotas in store.
func NewAdmission(store Store) *Admission {
	return &Admission{store: store, locks: map[string]*nsLock{}, written: map[string]*corev1.ResourceQuota{}}
}

var _ admission.Validator = (*Admission)(nil)

// MayReadManagedFields implements admission.ManagedFieldsScoper: usage
// and scopes never depend on managedFields.
func (p *Admission) MayReadManagedFields(context.Context, *admission.Attributes) bool { return false }

// Validate refuses a request that exceeds a quota of its namespace and
// charges the ones it fits.
func (p *Admission) Validate(ctx context.Context, a *admission.Attributes) error {
	if !a.Namespaced || a.Namespace == "" || a.Object == nil {
		return nil
	}
	if Ignored(a.Resource.GroupResource()) {
		return nil
	}
	e := For(a.Resource.GroupResource())
	if !e.Handles(a.Operation, a.Subresource, a.Object, a.OldObject) {
		return nil
	}
	unlock := p.lock(a.Namespace)
	defer unlock()

	quotas, err := p.list(ctx, a.Namespace)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list resource quotas: %w", err))
	}
	if len(quotas) == 0 {
		return nil
	}
	charged := map[string]bool{}
	for range maxChargeAttempts {
		pending, err := check(e, a, quotas, charged, time.Now())
		if err != nil || len(pending) == 0 || a.DryRun {
			return err
		}
		conflict := false
		for _, q := range pending {
			stored, err := p.store.UpdateStatus(ctx, q)
			switch {
			case apierrors.IsConflict(err):
				conflict = true
			case err != nil:
				return apierrors.NewInternalError(fmt.Errorf("charge resource quota %s: %w", q.Name, err))
			default:
				charged[q.Name] = true
				p.remember(stored)
			}
			if conflict {
				break
			}
		}
		if !conflict {
			return nil
		}
		// Someone else charged meanwhile: read the quotas again and re-check
		// what is still to charge.
		if quotas, err = p.refresh(ctx, a.Namespace, quotas); err != nil {
			return apierrors.NewInternalError(fmt.Errorf("read resource quotas: %w", err))
		}
	}
	return apierrors.NewConflict(api.GroupResource{Resource: "resourcequotas"}, "",
		"too many concurrent updates of the namespace's quotas, try again")
}

// check evaluates a against quotas (skipping those already charged) and
// returns copies of the quotas to charge with their new status.used, or the
// refusal.
func check(e Evaluator, a *admission.Attributes, quotas []*corev1.ResourceQuota, charged map[string]bool, now time.Time) ([]*corev1.ResourceQuota, error) {
	var interesting []*corev1.ResourceQuota
	for _, q := range quotas {
		restricted := e.MatchingResources(Names(q.Status.Hard))
		if len(restricted) == 0 {
			continue
		}
		match, err := MatchesScopes(e, q, a.Object)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("match quota %s: %w", q.Name, err))
		}
		if !match {
			continue
		}
		if err := e.Constraints(restricted, a.Object); err != nil {
			return nil, fmt.Errorf("failed quota: %s: %w", q.Name, err)
		}
		for _, r := range restricted {
			if _, ok := q.Status.Used[r]; !ok {
				slices.Sort(restricted)
				return nil, fmt.Errorf("status unknown for quota: %s, resources: %s", q.Name, strings.Join(restricted, ","))
			}
		}
		interesting = append(interesting, q)
	}
	if len(interesting) == 0 {
		return nil, nil
	}
	delta, err := e.Usage(a.Object, now)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("compute usage: %w", err))
	}
	if a.Operation == admission.Update && a.OldObject != nil {
		prev, err := e.Usage(a.OldObject, now)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("compute usage: %w", err))
		}
		delta = SubtractNonNegative(delta, prev)
	}
	delta = RemoveZeros(delta)
	if len(delta) == 0 {
		return nil, nil
	}
	var out []*corev1.ResourceQuota
	for _, q := range interesting {
		if charged[q.Name] {
			continue
		}
		requested := Mask(delta, Names(q.Status.Hard))
		if len(requested) == 0 {
			continue
		}
		newUsed := Add(q.Status.Used, requested)
		if ok, exceeded := LessThanOrEqual(Mask(newUsed, Names(requested)), q.Status.Hard); !ok {
			return nil, fmt.Errorf("exceeded quota: %s, requested: %s, used: %s, limited: %s", q.Name,
				prettyPrint(Mask(requested, exceeded)), prettyPrint(Mask(q.Status.Used, exceeded)),
				prettyPrint(Mask(q.Status.Hard, exceeded)))
		}
		c := *q
		c.Status = corev1.ResourceQuotaStatus{Hard: q.Status.Hard, Used: newUsed}
		out = append(out, &c)
	}
	return out, nil
}

// list returns the namespace's quotas, each replaced by the status this
// server last wrote when the listing has not caught up with it yet.
func (p *Admission) list(ctx context.Context, namespace string) ([]*corev1.ResourceQuota, error) {
	quotas, err := p.store.List(ctx, namespace)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	listed := make(map[string]bool, len(quotas))
	for i, q := range quotas {
		key := q.Namespace + "/" + q.Name
		listed[key] = true
		w, ok := p.written[key]
		if !ok {
			continue
		}
		if w.UID != q.UID {
			delete(p.written, key)
			continue
		}
		if rv(w.ResourceVersion) > rv(q.ResourceVersion) {
			quotas[i] = w
		} else {
			delete(p.written, key) // the listing caught up
		}
	}
	// Forget what was written to quotas of this namespace that are gone.
	for key := range p.written {
		if strings.HasPrefix(key, namespace+"/") && !listed[key] {
			delete(p.written, key)
		}
	}
	return quotas, nil
}

// refresh reads every quota of the namespace again from the store itself.
func (p *Admission) refresh(ctx context.Context, namespace string, old []*corev1.ResourceQuota) ([]*corev1.ResourceQuota, error) {
	out := make([]*corev1.ResourceQuota, 0, len(old))
	for _, q := range old {
		fresh, err := p.store.Get(ctx, namespace, q.Name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fresh)
	}
	return out, nil
}

func (p *Admission) remember(q *corev1.ResourceQuota) {
	if q == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.written[q.Namespace+"/"+q.Name] = q
}

// lock takes the namespace's lock and returns its release.
func (p *Admission) lock(namespace string) func() {
	p.mu.Lock()
	l := p.locks[namespace]
	if l == nil {
		l = &nsLock{}
		p.locks[namespace] = l
	}
	l.users++
	p.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		p.mu.Lock()
		l.users--
		if l.users == 0 {
			delete(p.locks, namespace)
		}
		p.mu.Unlock()
	}
}

// rv parses a resourceVersion (0 when it is not a number).
func rv(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// ErrNoStore is returned by a Store that is not connected yet.
var ErrNoStore = errors.New("quota: store not ready")
