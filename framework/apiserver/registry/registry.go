package registry

import (
	"context"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// Resource describes one served resource at one version.
type Resource struct {
	GroupVersion api.GroupVersion
	// Resource is the plural name in URLs ("pods").
	Resource string
	Kind     string
	ListKind string
	// Singular is the singular name ("pod").
	Singular   string
	ShortNames []string
	Categories []string
	Namespaced bool
	// Verbs served; empty means the eight standard verbs.
	Verbs []string

	Strategy Strategy

	// StatusSubresource serves /status and makes the main endpoint ignore status.
	StatusSubresource bool
	// StatusUpdatesMetadata makes writes to /status also take the object's
	// labels and annotations, as Kubernetes' status strategies of the older
	// kinds do (pods, services, nodes, namespaces, workloads, PDBs, CSRs, ...);
	// otherwise /status changes status only (custom resources and the newer
	// kinds, which reset metadata on status writes).
	StatusUpdatesMetadata bool
	// StatusResetsLabels keeps the stored labels on /status writes of a kind
	// with StatusUpdatesMetadata (Kubernetes' Deployment: annotations only).
	StatusResetsLabels bool
	// AdmissionDefaults are fields (paths outside metadata) that the
	// strategy's defaulting fills where Kubernetes fills them in admission
	// plugins, after its field manager has seen a new object (a pod's
	// spec.tolerations: DefaultTolerationSeconds). A create that did not
	// send one does not own it in managedFields, as in Kubernetes.
	AdmissionDefaults [][]string
	// Scale serves /scale when set.
	Scale *Scale
	// Generation maintains metadata.generation (1 on create, +1 on spec change).
	Generation bool
	// NameValidation checks metadata.name; nil means DNS-1123 subdomain.
	NameValidation func(name string, prefix bool) []string

	// Type is the Go type of the object (a struct, not a pointer). When set it
	// drives protobuf request decoding and strategic merge patch metadata; when nil
	// both are refused with 415.
	Type reflect.Type
	// SelectableFields returns the field-selector fields of obj beyond
	// metadata.name and metadata.namespace, which the server adds itself.
	SelectableFields func(obj map[string]any) map[string]string
	// RequireResourceVersion refuses updates without metadata.resourceVersion
	// (custom resources), instead of treating them as unconditional.
	RequireResourceVersion bool
	// Printer renders Table rows; nil gives NAME and CREATED AT.
	Printer *Printer
	// Schema is the OpenAPI v3 schema of the kind, for /openapi/v3; may be nil.
	Schema map[string]any
	// DeprecationWarning is sent as a Warning header when set.
	DeprecationWarning string
	// Deletion customises graceful deletion; nil means plain finalizer semantics.
	Deletion *Deletion
	// OrphanDependentsByDefault makes a delete without propagationPolicy or
	// orphanDependents orphan the object's dependents (unless it already
	// carries the foregroundDeletion finalizer), as Kubernetes does for
	// core/v1 ReplicationControllers; otherwise such a delete is Background.
	OrphanDependentsByDefault bool
	// Subresources are extra handlers ("log", "binding", "eviction", ...).
	Subresources map[string]Subresource
	// CreateAs, when set, makes a create of this resource act on another object
	// instead of storing one: the body's metadata.name names an object of
	// CreateAs.Resource (same group, version and namespace) and the request is
	// served as a POST of its CreateAs.Subresource. Kubernetes' core/v1
	// bindings resource is pods/NAME/binding reached this way.
	CreateAs *SubresourceRef

	// StorageVersion is the version objects are stored in when Convert is set
	// (empty means GroupVersion.Version). All versions of a resource share one
	// storage prefix.
	StorageVersion string
	// Convert converts obj, in any version of the resource, to version to; it must
	// set apiVersion. The server converts written objects to the storage version
	// before storing them and stored objects to the request's version on every read
	// (get, list, watch, Table, the read of an update or patch). It is called on a
	// copy the server owns, so it may modify obj and return it. Nil means objects are
	// stored and served as written (a single version).
	Convert func(obj map[string]any, to api.GroupVersion) (map[string]any, error)
	// ReadDefaults, when set, fills in defaults on every read of a stored
	// object (after any conversion), as Kubernetes defaults custom resources
	// read from storage: an object stored before its schema gained a default
	// is served with it. ReadDefaultsKey names the defaults (it changes when
	// they do, e.g. the CRD's generation), so renderings cached under other
	// defaults are not served.
	ReadDefaults    func(obj map[string]any)
	ReadDefaultsKey string
	// ConvertList, optional with Convert, converts several objects to version to
	// in one go and returns them in the same order (a conversion webhook answers
	// one ConversionReview for all of them). The server calls it for the items of
	// a list and of a watch's initial events that are not yet in the requested
	// version; the objects are copies the server owns. Nil means Convert is
	// called once per object.
	ConvertList func(objs []map[string]any, to api.GroupVersion) ([]map[string]any, error)

	// StorageResource, when set, makes this resource a second name for the
	// objects of another resource, served in another group: both share one
	// storage prefix and one watch cache, and objects are stored in
	// StorageResource's group and version. Kubernetes serves events.k8s.io/v1
	// events this way from the storage of core/v1 events (and served the
	// extensions/v1beta1 aliases of apps and networking kinds so). Convert is
	// required with it and converts between this resource's version and
	// StorageResource's; StorageVersion is ignored. StorageResource itself
	// should be registered too: its SelectableFields are the fields the watch
	// cache computes.
	StorageResource *api.GroupVersionResource
	// StorageFieldLabels, with StorageResource, maps this resource's
	// field-selector labels to StorageResource's where they differ
	// (events.k8s.io regarding.name → involvedObject.name); a label not in it
	// is the same there. A selector is then rewritten and matched against the
	// fields the watch cache computed once per object, as Kubernetes converts
	// field labels to the internal version, instead of converting every object
	// to this version to compute its fields. Nil means the latter.
	StorageFieldLabels map[string]string
}

// StorageGroupVersion is the group and version objects are stored in.
func (r *Resource) StorageGroupVersion() api.GroupVersion {
	if r.StorageResource != nil {
		return r.StorageResource.GroupVersion()
	}
	if r.Convert == nil || r.StorageVersion == "" {
		return r.GroupVersion
	}
	return api.GroupVersion{Group: r.GroupVersion.Group, Version: r.StorageVersion}
}

// StorageGroupVersionResource is the resource, in the version, whose storage
// holds this resource's objects: r's own in its storage version, or
// StorageResource.
func (r *Resource) StorageGroupVersionResource() api.GroupVersionResource {
	if r.StorageResource != nil {
		return *r.StorageResource
	}
	return r.StorageGroupVersion().WithResource(r.Resource)
}

// GroupVersionResource of the resource.
func (r *Resource) GroupVersionResource() api.GroupVersionResource {
	return r.GroupVersion.WithResource(r.Resource)
}

// GroupVersionKind of the resource's objects.
func (r *Resource) GroupVersionKind() api.GroupVersionKind { return r.GroupVersion.WithKind(r.Kind) }

// StandardVerbs are served when Resource.Verbs is empty.
var StandardVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// ServedVerbs returns the verbs the resource serves.
func (r *Resource) ServedVerbs() []string {
	if len(r.Verbs) == 0 {
		return StandardVerbs
	}
	return r.Verbs
}

// Deletion customises how a resource is deleted, for kinds whose deletion waits
// on more than metadata.finalizers (namespaces wait on spec.finalizers).
type Deletion struct {
	// Pending reports whether obj holds finalizers of its own kind that keep it
	// after a DELETE: it is marked (deletionTimestamp) and removed only once
	// Pending is false and metadata.finalizers is empty.
	Pending func(obj map[string]any) bool
	// Prepare updates an object being marked for deletion (e.g. phase Terminating).
	Prepare func(obj map[string]any)
	// GracePeriod, when set, makes deletion graceful (pods): see
	// GracePeriodFunc and BeforeDelete. Nil means every DELETE deletes at
	// once, finalizers permitting.
	GracePeriod GracePeriodFunc
}

// Scale locates the fields of the scale subresource (JSON paths as field lists).
type Scale struct {
	SpecReplicasPath   []string
	StatusReplicasPath []string
	// LabelSelectorPath points at a string selector (CRDs) ...
	LabelSelectorPath []string
	// ... or SelectorFromObject computes it (built-ins with a LabelSelector).
	SelectorFromObject func(obj map[string]any) string
}

// Subresource serves a custom subresource (log, binding, eviction, ...); the
// apiserver routes requests for it here after resolving the parent resource.
type Subresource interface {
	// Verbs served, for discovery (e.g. "get", "create").
	Verbs() []string
	// Kind is the kind reported in discovery, with its group and version when they
	// differ from the parent's (Eviction is policy/v1).
	Kind() api.GroupVersionKind
	// Serve handles one request. It writes the response itself; errors it returns
	// (before writing) are written as Status objects by the server.
	Serve(w http.ResponseWriter, r *http.Request, parent Parent) error
}

// Connecter is implemented by subresources that connect the client to
// something (pods/exec, pods/attach, pods/portforward, the proxies): before
// Serve, the server runs admission on the request as Kubernetes does, with
// operation CONNECT, the subresource's Kind and the options object
// ConnectOptions returns (e.g. a v1 PodAttachOptions read from the query).
// Its errors are returned to the client (a Status) without calling Serve.
type Connecter interface {
	ConnectOptions(r *http.Request) (map[string]any, error)
}

// SubresourceRef names a subresource of another resource of the same group
// and version (see Resource.CreateAs).
type SubresourceRef struct {
	Resource    string
	Subresource string
}

// Parent gives a subresource handler access to the object it belongs to.
type Parent interface {
	// Name and Namespace of the parent object.
	Name() string
	Namespace() string
	// Get reads the current object (NotFound as an API error).
	Get(ctx context.Context) (map[string]any, error)
	// Update reads the object, applies mutate and stores the result, retrying on
	// conflicts; mutate's API errors are returned unchanged.
	Update(ctx context.Context, mutate func(obj map[string]any) error) (map[string]any, error)
	// UpdateSpec is Update for a subresource through which clients change
	// the spec (pods/ephemeralcontainers): on a resource with Generation,
	// metadata.generation goes up when the spec changed, as on the main
	// resource. Update keeps it (a binding is the server's write).
	UpdateSpec(ctx context.Context, mutate func(obj map[string]any) error) (map[string]any, error)
	// Delete deletes the object with the given options, like a DELETE request.
	Delete(ctx context.Context, opts *api.DeleteOptions) error
	// DecodeBody decodes the request body (JSON, YAML or protobuf of type t).
	DecodeBody(r *http.Request, t reflect.Type) (map[string]any, error)
}

// Printer renders Table output: column definitions and one row per object.
type Printer struct {
	Columns []Column
	// Row returns one cell per column.
	Row func(obj map[string]any, now time.Time) ([]any, error)
}

// Column is a Table column definition.
type Column struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Format      string `json:"format"`
	Description string `json:"description"`
	Priority    int32  `json:"priority"`
}

// Strategy holds the kind-specific parts of the write path.
type Strategy interface {
	// Canonicalize turns a decoded request object into the stored form: unknown fields
	// are dropped and returned as paths ("spec.foo") for fieldValidation, defaults are
	// applied. A type error (a string where an integer belongs) is returned as errs.
	Canonicalize(obj map[string]any) (out map[string]any, unknown []string, errs field.ErrorList)
	// ValidateCreate checks a new object (metadata is validated by the server).
	ValidateCreate(ctx context.Context, obj map[string]any) field.ErrorList
	// ValidateUpdate checks an update of old to obj.
	ValidateUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList
}

// TypedStrategy is an optional Strategy extension for strategies that decode the
// object into a typed value while canonicalizing it. On create the server passes
// that value back to ValidateCreateTyped, so the object is decoded once per
// request; it does so only when nothing changed the object in between (no
// Preparer), and calls ValidateCreate otherwise.
type TypedStrategy interface {
	// CanonicalizeTyped is Canonicalize that also returns the value out was
	// encoded from.
	CanonicalizeTyped(obj map[string]any) (out map[string]any, typed Decoded, unknown []string, errs field.ErrorList)
	// ValidateCreateTyped is ValidateCreate of out, given the value
	// CanonicalizeTyped returned with it.
	ValidateCreateTyped(ctx context.Context, out map[string]any, typed Decoded) field.ErrorList
}

// OwnedCanonicalizer is an optional TypedStrategy extension for a caller that
// gives up the object it canonicalizes: CanonicalizeOwned is
// CanonicalizeTyped, with the same results, except that out may be obj itself
// or share maps and slices with it wherever the canonical form has obj's
// values (what is already canonical is not copied). obj must not be used
// afterwards other than through out.
type OwnedCanonicalizer interface {
	CanonicalizeOwned(obj map[string]any) (out map[string]any, typed Decoded, unknown []string, errs field.ErrorList)
}

// Decoded is the typed value a TypedStrategy decoded an object into.
type Decoded struct {
	// Value is opaque to the server.
	Value any
	// Meta is the value's metadata, which the server validates; nil when the
	// strategy cannot tell (the server then decodes metadata from the map).
	Meta *api.ObjectMeta
}

// Preparer is an optional Strategy extension that resets fields on create and update
// (e.g. clear status on create).
type Preparer interface {
	PrepareForCreate(obj map[string]any)
	PrepareForUpdate(obj, old map[string]any)
}

// Admitter is an optional Strategy extension for kinds whose writes reserve
// something outside the object itself (a Service's cluster IPs and node ports).
// The server calls it on create and update once the object is canonical,
// prepared and valid, right before storing it; an update retried after a
// conflict is admitted again. It may set fields of obj (the values it
// allocated). An error fails the request: API errors are returned as they are,
// others as 500. Dry runs are admitted too and then aborted, so their response
// shows the values a real write would get.
type Admitter interface {
	AdmitCreate(ctx context.Context, obj map[string]any) (Admission, error)
	AdmitUpdate(ctx context.Context, obj, old map[string]any) (Admission, error)
}

// Admission learns how an admitted write ended: Commit runs after the object
// was stored (or, for an update that removed the last finalizer, deleted),
// Abort when nothing was stored (storage error, conflict retry, dry run, no
// change). Exactly one of them runs, if set, with a context that is not
// cancelled when the client goes away.
type Admission struct {
	Commit func(ctx context.Context)
	Abort  func(ctx context.Context)
}

// DeleteHook is an optional Strategy extension told when an object left
// storage: after a DELETE (or delete collection) removed it, or after the
// update that removed its last finalizer. obj is its last state, in the
// storage version. The hook
// cannot fail the request; whatever it misses (a crash between the delete and
// the hook) is the strategy's to repair.
type DeleteHook interface {
	Deleted(ctx context.Context, obj map[string]any)
}

// Registry is the set of served resources.
type Registry struct {
	mu        sync.RWMutex
	resources map[api.GroupVersionResource]*Resource
	version   int64
	listeners []func()
	// served is a copy of resources, replaced (never changed) on every Add
	// and Remove, for Get to read without locking.
	served atomic.Pointer[map[api.GroupVersionResource]*Resource]
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{resources: map[api.GroupVersionResource]*Resource{}}
}

// Add registers or replaces a resource.
func (r *Registry) Add(res *Resource) {
	r.mu.Lock()
	r.resources[res.GroupVersionResource()] = res
	r.publish()
	ls := slices.Clone(r.listeners)
	r.mu.Unlock()
	for _, l := range ls {
		l()
	}
}

// Remove unregisters a resource.
func (r *Registry) Remove(gvr api.GroupVersionResource) {
	r.mu.Lock()
	delete(r.resources, gvr)
	r.publish()
	ls := slices.Clone(r.listeners)
	r.mu.Unlock()
	for _, l := range ls {
		l()
	}
}

// publish counts a change of resources and publishes a copy for Get; r.mu is
// held.
func (r *Registry) publish() {
	r.version++
	m := maps.Clone(r.resources)
	r.served.Store(&m)
}

// OnChange calls f after every Add or Remove.
func (r *Registry) OnChange(f func()) {
	r.mu.Lock()
	r.listeners = append(r.listeners, f)
	r.mu.Unlock()
}

// Get returns the resource, or nil.
func (r *Registry) Get(gvr api.GroupVersionResource) *Resource {
	if m := r.served.Load(); m != nil {
		return (*m)[gvr]
	}
	return nil
}

// Version counts changes; discovery uses it as a cache key.
func (r *Registry) Version() int64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.version
}

// All returns every resource sorted by group, version and resource name.
func (r *Registry) All() []*Resource {
	r.mu.RLock()
	out := make([]*Resource, 0, len(r.resources))
	for _, res := range r.resources {
		out = append(out, res)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Resource) int {
		if a.GroupVersion.Group != b.GroupVersion.Group {
			if a.GroupVersion.Group < b.GroupVersion.Group {
				return -1
			}
			return 1
		}
		if a.GroupVersion.Version != b.GroupVersion.Version {
			if a.GroupVersion.Version < b.GroupVersion.Version {
				return -1
			}
			return 1
		}
		if a.Resource < b.Resource {
			return -1
		}
		if a.Resource > b.Resource {
			return 1
		}
		return 0
	})
	return out
}
