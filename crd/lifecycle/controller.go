package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/crd"
	crdapi "github.com/converge-dev/converge/crd/api"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/apiserver/registry"
	"github.com/converge-dev/converge/framework/storage"
)

// Prefix is the storage prefix of CustomResourceDefinitions.
const Prefix = "/registry/" + crdapi.Group + "/customresourcedefinitions/"

// WebhookConversionCondition was set (True) on CRDs asking for webhook
// conversion while it was not served. Conversion webhooks are called now; the
// controller removes the condition from CRDs that still carry it.
const WebhookConversionCondition = "WebhookConversionNotServed"

// Options configure the lifecycle loop.
type Options struct {
	// Storage is the control plane's storage (CRDs are watched there, custom
	// resources deleted there).
	Storage storage.Interface
	// Registry receives the custom resources' entries.
	Registry *registry.Registry
	// Handler is the API server's handler; status and finalizer writes go through it.
	Handler http.Handler
	// Logger receives progress and errors.
	Logger logr.Logger
	// Dial connects conversion webhooks' clients (crd.Dialer); nil dials
	// their addresses as they are.
	Dial crd.Dialer
}

// Controller is the CRD lifecycle loop.
type Controller struct {
	opts Options
	log  logr.Logger
	// crds holds the latest object of every CRD, by name.
	crds map[string]*crdapi.CustomResourceDefinition
	// installed holds the resources installed per CRD and the spec they came from.
	installed map[string]*installation
}

type installation struct {
	gvrs []api.GroupVersionResource
	spec []byte
}

// New returns a controller; Run starts it.
func New(opts Options) *Controller {
	return &Controller{opts: opts, log: opts.Logger, crds: map[string]*crdapi.CustomResourceDefinition{}, installed: map[string]*installation{}}
}

// Run lists the CRDs, then follows their changes until ctx ends; it relists
// after a broken watch.
func (c *Controller) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		rev, err := c.list(ctx)
		if err != nil {
			c.log.Error(err, "List CRDs")
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		c.watch(ctx, rev)
	}
	return nil
}

func (c *Controller) list(ctx context.Context) (int64, error) {
	res, err := c.opts.Storage.List(ctx, Prefix, storage.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list CRDs: %w", err)
	}
	seen := map[string]bool{}
	var objs []*crdapi.CustomResourceDefinition
	for _, kv := range res.Items {
		o, err := decode(kv)
		if err != nil {
			c.log.Error(err, "Decode CRD", "key", kv.Key)
			continue
		}
		objs = append(objs, o)
		seen[o.Metadata.Name] = true
	}
	for name := range c.crds {
		if !seen[name] {
			c.forget(name)
		}
	}
	sort.SliceStable(objs, func(i, j int) bool {
		return objs[i].Metadata.CreationTimestamp.Before(objs[j].Metadata.CreationTimestamp.Time)
	})
	for _, o := range objs {
		c.crds[o.Metadata.Name] = o
	}
	for _, o := range objs {
		c.sync(ctx, o)
	}
	return res.Revision, nil
}

func (c *Controller) watch(ctx context.Context, rev int64) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for ev := range c.opts.Storage.Watch(wctx, Prefix, rev) {
		if ev.Err != nil {
			c.log.Error(ev.Err, "CRD watch ended")
			return
		}
		switch ev.Type {
		case storage.EventDelete:
			if ev.Prev != nil {
				if o, err := decode(*ev.Prev); err == nil {
					c.forget(o.Metadata.Name)
				}
			}
		case storage.EventPut:
			o, err := decode(ev.KV)
			if err != nil {
				c.log.Error(err, "Decode CRD", "key", ev.KV.Key)
				continue
			}
			c.crds[o.Metadata.Name] = o
			c.sync(ctx, o)
		}
	}
}

func decode(kv storage.KeyValue) (*crdapi.CustomResourceDefinition, error) {
	m, err := api.DecodeMap(kv.Value)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", kv.Key, err)
	}
	o, err := crdapi.FromMap(m)
	if err != nil {
		return nil, err
	}
	o.Metadata.ResourceVersion = fmt.Sprint(kv.ModRevision)
	return o, nil
}

// forget uninstalls a CRD that is gone from storage.
func (c *Controller) forget(name string) {
	delete(c.crds, name)
	c.uninstall(name)
}

func (c *Controller) uninstall(name string) {
	inst := c.installed[name]
	if inst == nil {
		return
	}
	for _, gvr := range inst.gvrs {
		c.opts.Registry.Remove(gvr)
	}
	delete(c.installed, name)
}

// sync brings the registry and the status of one CRD up to date.
func (c *Controller) sync(ctx context.Context, o *crdapi.CustomResourceDefinition) {
	log := c.log.WithValues("crd", o.Metadata.Name)
	if o.Metadata.DeletionTimestamp != nil {
		if err := c.terminate(ctx, o); err != nil {
			log.Error(err, "Clean up CRD")
		}
		return
	}
	conds := map[string]crdapi.CustomResourceDefinitionCondition{}
	var accepted crdapi.CustomResourceDefinitionNames
	if reason, msg := c.nameConflict(o); reason != "" {
		conds[crdapi.NamesAccepted] = cond(crdapi.NamesAccepted, crdapi.ConditionFalse, reason, msg)
		conds[crdapi.Established] = cond(crdapi.Established, crdapi.ConditionFalse, "NotAccepted", "not all names are accepted")
		accepted = o.Status.AcceptedNames
	} else {
		conds[crdapi.NamesAccepted] = cond(crdapi.NamesAccepted, crdapi.ConditionTrue, "NoConflicts", "no conflicts found")
		accepted = o.Spec.Names
		if err := c.install(o); err != nil {
			log.Error(err, "Install CRD")
			conds[crdapi.Established] = cond(crdapi.Established, crdapi.ConditionFalse, "InstallationFailed", err.Error())
		} else {
			c.primeCaches(ctx, o)
			conds[crdapi.Established] = cond(crdapi.Established, crdapi.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")
		}
	}
	if err := c.writeStatus(ctx, o.Metadata.Name, func(st *crdapi.CustomResourceDefinitionStatus) {
		st.AcceptedNames = accepted
		st.Conditions = mergeConditions(st.Conditions, conds, []string{crdapi.NamesAccepted, crdapi.Established, WebhookConversionCondition})
		if sv := o.StorageVersion(); sv != "" && !slices.Contains(st.StoredVersions, sv) {
			st.StoredVersions = append(st.StoredVersions, sv)
		}
	}); err != nil {
		log.Error(err, "Write CRD status")
	}
}

func cond(typ, status, reason, msg string) crdapi.CustomResourceDefinitionCondition {
	return crdapi.CustomResourceDefinitionCondition{Type: typ, Status: status, Reason: reason, Message: msg}
}

// mergeConditions sets want over cur, keeping lastTransitionTime when the status
// did not change; managed types absent from want are removed.
func mergeConditions(cur []crdapi.CustomResourceDefinitionCondition, want map[string]crdapi.CustomResourceDefinitionCondition, managed []string) []crdapi.CustomResourceDefinitionCondition {
	var out []crdapi.CustomResourceDefinitionCondition
	done := map[string]bool{}
	for _, c := range cur {
		w, ok := want[c.Type]
		if !ok {
			if !slices.Contains(managed, c.Type) {
				out = append(out, c)
			}
			continue
		}
		if w.Status == c.Status {
			w.LastTransitionTime = c.LastTransitionTime
		} else {
			w.LastTransitionTime = api.Now()
		}
		out = append(out, w)
		done[c.Type] = true
	}
	for _, t := range append(managed, crdapi.Terminating) {
		if w, ok := want[t]; ok && !done[t] {
			w.LastTransitionTime = api.Now()
			out = append(out, w)
		}
	}
	return out
}

// nameConflict checks o's names against the other installed CRDs of its group.
func (c *Controller) nameConflict(o *crdapi.CustomResourceDefinition) (reason, msg string) {
	n := o.Spec.Names
	for name, other := range c.crds {
		if name == o.Metadata.Name || other.Spec.Group != o.Spec.Group || c.installed[name] == nil {
			continue
		}
		on := other.Spec.Names
		otherNames := append([]string{on.Plural, on.Singular}, on.ShortNames...)
		switch {
		case n.Plural == on.Plural:
			return "PluralConflict", fmt.Sprintf("%q is already in use", n.Plural)
		case n.Singular != "" && slices.Contains(otherNames, n.Singular):
			return "SingularConflict", fmt.Sprintf("%q is already in use", n.Singular)
		case n.Kind == on.Kind:
			return "KindConflict", fmt.Sprintf("%q is already in use", n.Kind)
		case n.ListKind != "" && n.ListKind == on.ListKind:
			return "ListKindConflict", fmt.Sprintf("%q is already in use", n.ListKind)
		}
		for _, sn := range n.ShortNames {
			if slices.Contains(otherNames, sn) {
				return "ShortNamesConflict", fmt.Sprintf("%q is already in use", sn)
			}
		}
	}
	return "", ""
}

// primeCaches starts the watch cache of every served version before the CRD
// is Established (a list at resourceVersion 0 is served from it), as
// Kubernetes starts a resource's cache with its storage: a client that
// creates a custom resource and then watches from the resourceVersion it got
// is served instead of told that version is too old.
func (c *Controller) primeCaches(ctx context.Context, o *crdapi.CustomResourceDefinition) {
	for _, v := range o.Spec.Versions {
		if !v.Served {
			continue
		}
		path := "/apis/" + o.Spec.Group + "/" + v.Name + "/" + o.Spec.Names.Plural + "?resourceVersion=0&limit=1"
		if _, err := c.do(ctx, http.MethodGet, path, "", nil); err != nil {
			c.log.V(1).Info("Priming the watch cache failed", "crd", o.Metadata.Name, "version", v.Name, "error", err.Error())
		}
	}
}

// install (re)registers the served versions of o when its spec changed.
func (c *Controller) install(o *crdapi.CustomResourceDefinition) error {
	spec, err := json.Marshal(o.Spec)
	if err != nil {
		return fmt.Errorf("encode spec: %w", err)
	}
	prev := c.installed[o.Metadata.Name]
	if prev != nil && bytes.Equal(prev.spec, spec) {
		return nil
	}
	resources, err := crd.CustomResources(o, c.opts.Dial)
	if err != nil {
		return err
	}
	inst := &installation{spec: spec}
	for _, r := range resources {
		c.opts.Registry.Add(r)
		inst.gvrs = append(inst.gvrs, r.GroupVersionResource())
	}
	if prev != nil {
		for _, gvr := range prev.gvrs {
			if !slices.Contains(inst.gvrs, gvr) {
				c.opts.Registry.Remove(gvr)
			}
		}
	}
	c.installed[o.Metadata.Name] = inst
	return nil
}

// terminate deletes the custom resources of o, uninstalls it and removes the
// cleanup finalizer.
func (c *Controller) terminate(ctx context.Context, o *crdapi.CustomResourceDefinition) error {
	if !slices.Contains(o.Metadata.Finalizers, crdapi.CleanupFinalizer) {
		c.uninstall(o.Metadata.Name)
		return nil
	}
	if err := c.writeStatus(ctx, o.Metadata.Name, func(st *crdapi.CustomResourceDefinitionStatus) {
		want := map[string]crdapi.CustomResourceDefinitionCondition{
			crdapi.Terminating: cond(crdapi.Terminating, crdapi.ConditionTrue, "InstanceDeletionInProgress", "CustomResource deletion is in progress"),
		}
		st.Conditions = mergeConditions(st.Conditions, want, nil)
	}); err != nil && !isNotFound(err) {
		return err
	}
	prefix := "/registry/" + o.Spec.Group + "/" + o.Spec.Names.Plural + "/"
	for {
		res, err := c.opts.Storage.List(ctx, prefix, storage.ListOptions{Limit: 500})
		if err != nil {
			return fmt.Errorf("list custom resources: %w", err)
		}
		for _, kv := range res.Items {
			if _, _, err := c.opts.Storage.Delete(ctx, kv.Key, 0); err != nil && !errors.Is(err, storage.ErrNotFound) {
				return fmt.Errorf("delete %s: %w", kv.Key, err)
			}
		}
		if !res.More {
			break
		}
	}
	c.uninstall(o.Metadata.Name)
	return c.removeFinalizer(ctx, o.Metadata.Name)
}

type apiError struct {
	code int
	body string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

func isNotFound(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.code == http.StatusNotFound
}

func isConflict(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.code == http.StatusConflict
}

func (c *Controller) do(ctx context.Context, method, path, contentType string, body any) (map[string]any, error) {
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequestWithContext(ctx, method, path, rd)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	c.opts.Handler.ServeHTTP(rec, req)
	if rec.Code >= 300 {
		return nil, &apiError{code: rec.Code, body: rec.Body.String()}
	}
	m, err := api.DecodeMap(rec.Body.Bytes())
	if err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	return m, nil
}

func crdPath(name string) string {
	return "/apis/" + crdapi.Group + "/" + crdapi.Version + "/customresourcedefinitions/" + name
}

// writeStatus reads the CRD, applies mutate to its status and writes it back
// through /status when it changed, retrying on conflicts.
func (c *Controller) writeStatus(ctx context.Context, name string, mutate func(*crdapi.CustomResourceDefinitionStatus)) error {
	for range 10 {
		cur, err := c.do(ctx, http.MethodGet, crdPath(name), "", nil)
		if err != nil {
			return err
		}
		o, err := crdapi.FromMap(cur)
		if err != nil {
			return err
		}
		st := o.Status
		before, _ := json.Marshal(st)
		mutate(&st)
		after, _ := json.Marshal(st)
		if bytes.Equal(before, after) {
			return nil
		}
		var stMap map[string]any
		if err := json.Unmarshal(after, &stMap); err != nil {
			return fmt.Errorf("encode status: %w", err)
		}
		cur["status"] = stMap
		_, err = c.do(ctx, http.MethodPut, crdPath(name)+"/status", "application/json", cur)
		if isConflict(err) {
			continue
		}
		return err
	}
	return fmt.Errorf("write status of %s: too many conflicts", name)
}

func (c *Controller) removeFinalizer(ctx context.Context, name string) error {
	for range 10 {
		cur, err := c.do(ctx, http.MethodGet, crdPath(name), "", nil)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		fins := api.NestedSlice(cur, "metadata", "finalizers")
		keep := []any{}
		for _, f := range fins {
			if f != crdapi.CleanupFinalizer {
				keep = append(keep, f)
			}
		}
		if len(keep) == len(fins) {
			return nil
		}
		patch := map[string]any{"metadata": map[string]any{
			"finalizers": keep, "resourceVersion": api.NestedString(cur, "metadata", "resourceVersion"),
		}}
		_, err = c.do(ctx, http.MethodPatch, crdPath(name), "application/merge-patch+json", patch)
		if isConflict(err) {
			continue
		}
		if isNotFound(err) {
			return nil
		}
		return err
	}
	return fmt.Errorf("remove finalizer of %s: too many conflicts", name)
}
