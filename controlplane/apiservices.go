package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	apiregistrationv1 "github.com/converge-dev/converge/builtin/api/apiregistration/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver"
)

// Local APIServices, as kube-apiserver's autoregistration keeps them: one per
// group version the API server serves (built-in groups and custom
// resources'), named "<version>.<group>", without spec.service, labelled
// kube-aggregator.kubernetes.io/automanaged and reported Available (reason
// Local). A group version that stops being served (a CRD version removed)
// loses its automanaged APIService. APIServices naming a Service are left as
// their owners wrote them; their Available condition is the aggregator's
// check (builtin/aggregator), redone every availabilityInterval. Writes go through the API server's own handler as
// the bootstrap user, like the CRD lifecycle's.

const apiServicesPath = "/apis/apiregistration.k8s.io/v1/apiservices"

// apiServicesStartWait bounds how long Start waits for the APIService loop's
// first pass (milliseconds, unless the machine is very busy).
const apiServicesStartWait = 10 * time.Second

// The /readyz checks of the APIService loop, named as kube-apiserver names
// its own: the loop runs, and its first pass has written every local
// APIService (Available) of the group versions served at that time.
const (
	readyzAPIServiceController = "poststarthook/apiservice-registration-controller"
	readyzAutoregister         = "autoregister-completion"
)

// startAPIServices keeps the local APIServices in step with the registry
// until ctx ends, and adds its readiness checks to the API server's /readyz.
// The channel it returns is closed once the first pass succeeded (what
// autoregister-completion reports).
func (cp *ControlPlane) startAPIServices(ctx context.Context) (<-chan struct{}, error) {
	var running, synced atomic.Bool
	firstPass := make(chan struct{})
	for name, done := range map[string]*atomic.Bool{readyzAPIServiceController: &running, readyzAutoregister: &synced} {
		err := cp.server.AddReadyzCheck(name, func(*http.Request) error {
			if !done.Load() {
				return fmt.Errorf("%s: not finished", name)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("add readyz check %s: %w", name, err)
		}
	}
	kick := cp.apiServicesKick
	cp.registry.OnChange(cp.kickAPIServices)
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		log := cp.log.WithName("apiservices")
		running.Store(true)
		for {
			err := cp.syncAPIServices(ctx)
			if err == nil {
				err = cp.aggregator.Refresh(ctx)
			}
			if err == nil && !synced.Swap(true) {
				close(firstPass)
			}
			if err != nil && ctx.Err() == nil {
				log.Error(err, "Keeping the local APIServices failed; retrying")
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
			if !cp.waitAPIServicePass(ctx, kick) {
				return
			}
		}
	}()
	return firstPass, nil
}

// waitAPIServicePass waits until the APIService loop has a pass to do: a
// registry change (kick), or the availabilityInterval recheck of the
// Service-backed APIServices, which only needs a pass when there are some
// (the aggregator's table, refreshed from the watch cache, says; a new one
// kicks). It reports false when ctx ended.
func (cp *ControlPlane) waitAPIServicePass(ctx context.Context, kick <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-kick:
			// Let a burst of registry changes (a CRD's versions) settle.
			time.Sleep(50 * time.Millisecond)
			return true
		case <-time.After(availabilityInterval):
			if err := cp.aggregator.Refresh(ctx); err != nil || cp.aggregator.HasRemote() {
				return true
			}
		}
	}
}

// kickAPIServices asks the APIService loop for a pass now (a registry
// change, a new aggregated APIService).
func (cp *ControlPlane) kickAPIServices() {
	select {
	case cp.apiServicesKick <- struct{}{}:
	default:
	}
}

// wantedAPIServices returns the local APIService of every served group
// version, by name.
func (cp *ControlPlane) wantedAPIServices() map[string]apiregistrationv1.APIService {
	versions := map[string][]string{}
	for _, res := range cp.registry.All() {
		gv := res.GroupVersion
		if !slices.Contains(versions[gv.Group], gv.Version) {
			versions[gv.Group] = append(versions[gv.Group], gv.Version)
		}
	}
	want := map[string]apiregistrationv1.APIService{}
	for group, vs := range versions {
		slices.SortFunc(vs, apiserver.CompareVersions)
		managed := "onstart"
		if apiserver.GroupPriority(group) == 1000 {
			managed = "true"
		}
		for i, v := range vs {
			s := apiregistrationv1.APIService{
				TypeMeta:   api.TypeMeta{APIVersion: apiregistrationv1.GroupVersion.String(), Kind: "APIService"},
				ObjectMeta: api.ObjectMeta{Name: v + "." + group, Labels: map[string]string{apiregistrationv1.AutomanagedLabel: managed}},
				Spec: apiregistrationv1.APIServiceSpec{Group: group, Version: v,
					GroupPriorityMinimum: apiserver.GroupPriority(group), VersionPriority: int32(max(15-i, 1))},
			}
			want[s.Name] = s
		}
	}
	return want
}

// syncAPIServices creates, updates and deletes automanaged APIServices and
// sets their status.
func (cp *ControlPlane) syncAPIServices(ctx context.Context) error {
	var list apiregistrationv1.APIServiceList
	if err := cp.loopback(ctx, http.MethodGet, apiServicesPath, nil, &list); err != nil {
		return fmt.Errorf("list apiservices: %w", err)
	}
	want := cp.wantedAPIServices()
	have := map[string]*apiregistrationv1.APIService{}
	for i := range list.Items {
		have[list.Items[i].Name] = &list.Items[i]
	}
	for name, w := range want {
		cur := have[name]
		switch {
		case cur == nil:
			cur = &apiregistrationv1.APIService{}
			if err := cp.loopback(ctx, http.MethodPost, apiServicesPath, w, cur); err != nil {
				return fmt.Errorf("create apiservice %s: %w", name, err)
			}
		case cur.Spec.Service == nil && (cur.Spec.GroupPriorityMinimum != w.Spec.GroupPriorityMinimum ||
			cur.Spec.VersionPriority != w.Spec.VersionPriority || cur.Labels[apiregistrationv1.AutomanagedLabel] == ""):
			upd := *cur
			upd.Spec = w.Spec
			upd.Labels = w.Labels
			if err := cp.loopback(ctx, http.MethodPut, apiServicesPath+"/"+name, upd, cur); err != nil {
				return fmt.Errorf("update apiservice %s: %w", name, err)
			}
		}
		if cur.Spec.Service == nil {
			if err := cp.setAvailable(ctx, cur, "True", "Local", "Local APIServices are always available"); err != nil {
				return err
			}
		}
	}
	for name, cur := range have {
		if _, ok := want[name]; ok {
			continue
		}
		if cur.Spec.Service != nil {
			c := cp.aggregator.Check(ctx, cur)
			if err := cp.setAvailable(ctx, cur, c.Status, c.Reason, c.Message); err != nil {
				return err
			}
			cp.aggregator.Record(name, c)
			continue
		}
		if cur.Labels[apiregistrationv1.AutomanagedLabel] != "" {
			if err := cp.loopback(ctx, http.MethodDelete, apiServicesPath+"/"+name, nil, nil); err != nil && !isNotFoundErr(err) {
				return fmt.Errorf("delete apiservice %s: %w", name, err)
			}
		}
	}
	return nil
}

// availabilityInterval is how often the loop rechecks Service-backed
// APIServices' availability (and picks up new ones) without a registry
// change.
const availabilityInterval = 2 * time.Second

// setAvailable writes the Available condition of s when its status or
// reason differs; the transition time changes with the status.
func (cp *ControlPlane) setAvailable(ctx context.Context, s *apiregistrationv1.APIService, status, reason, msg string) error {
	for _, c := range s.Status.Conditions {
		if c.Type == apiregistrationv1.Available && c.Status == status && c.Reason == reason {
			return nil
		}
	}
	// Other conditions (written by clients) stay, in place.
	upd := *s
	cond := apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: status,
		Reason: reason, Message: msg, LastTransitionTime: api.Now()}
	upd.Status.Conditions = slices.Clone(s.Status.Conditions)
	if i := slices.IndexFunc(upd.Status.Conditions, func(c apiregistrationv1.APIServiceCondition) bool {
		return c.Type == apiregistrationv1.Available
	}); i >= 0 {
		if upd.Status.Conditions[i].Status == status {
			cond.LastTransitionTime = upd.Status.Conditions[i].LastTransitionTime
		}
		upd.Status.Conditions[i] = cond
	} else {
		upd.Status.Conditions = append([]apiregistrationv1.APIServiceCondition{cond}, upd.Status.Conditions...)
	}
	if err := cp.loopback(ctx, http.MethodPut, apiServicesPath+"/"+s.Name+"/status", upd, s); err != nil {
		return fmt.Errorf("update status of apiservice %s: %w", s.Name, err)
	}
	return nil
}
