package client

import (
	"net/url"
	"strconv"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/fields"
	"github.com/converge-dev/converge/framework/api/labels"
)

// ListOptions are the options of List, Watch and DeleteAllOf. Build them with the
// option values of this package (InNamespace, MatchingLabels, Limit, ...).
type ListOptions struct {
	// Namespace restricts the call to one namespace ("" = all namespaces, or the
	// cluster-scoped collection).
	Namespace string
	// LabelSelector and FieldSelector filter the objects (nil: everything).
	LabelSelector labels.Selector
	FieldSelector fields.Selector
	// Limit and Continue page through a list.
	Limit    int64
	Continue string
	// ResourceVersion: for List, "" = latest, "0" = any; for Watch, the version
	// to start after.
	ResourceVersion string
	// AllowWatchBookmarks asks the server for BOOKMARK events.
	AllowWatchBookmarks bool
	// TimeoutSeconds bounds a watch on the server side.
	TimeoutSeconds *int64
}

// ListOption modifies ListOptions.
type ListOption interface{ ApplyToList(*ListOptions) }

// ApplyToList copies the set fields of o into opts, so a ListOptions is itself a
// ListOption.
func (o *ListOptions) ApplyToList(opts *ListOptions) {
	if o.Namespace != "" {
		opts.Namespace = o.Namespace
	}
	if o.LabelSelector != nil {
		opts.LabelSelector = o.LabelSelector
	}
	if o.FieldSelector != nil {
		opts.FieldSelector = o.FieldSelector
	}
	if o.Limit > 0 {
		opts.Limit = o.Limit
	}
	if o.Continue != "" {
		opts.Continue = o.Continue
	}
	if o.ResourceVersion != "" {
		opts.ResourceVersion = o.ResourceVersion
	}
	if o.AllowWatchBookmarks {
		opts.AllowWatchBookmarks = true
	}
	if o.TimeoutSeconds != nil {
		opts.TimeoutSeconds = o.TimeoutSeconds
	}
}

// ApplyToDeleteAllOf lets a ListOptions be passed to DeleteAllOf.
func (o *ListOptions) ApplyToDeleteAllOf(opts *DeleteAllOfOptions) { o.ApplyToList(&opts.ListOptions) }

func (o *ListOptions) query(watch bool) url.Values {
	q := url.Values{}
	if o.LabelSelector != nil && !o.LabelSelector.Empty() {
		q.Set("labelSelector", o.LabelSelector.String())
	}
	if o.FieldSelector != nil && !o.FieldSelector.Empty() {
		q.Set("fieldSelector", o.FieldSelector.String())
	}
	if o.Limit > 0 && !watch {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.Continue != "" && !watch {
		q.Set("continue", o.Continue)
	}
	if o.ResourceVersion != "" {
		q.Set("resourceVersion", o.ResourceVersion)
	}
	if watch {
		q.Set("watch", "true")
		if o.AllowWatchBookmarks {
			q.Set("allowWatchBookmarks", "true")
		}
		if o.TimeoutSeconds != nil {
			q.Set("timeoutSeconds", strconv.FormatInt(*o.TimeoutSeconds, 10))
		}
	}
	return q
}

// InNamespace restricts List, Watch and DeleteAllOf to a namespace.
type InNamespace string

// ApplyToList implements ListOption.
func (n InNamespace) ApplyToList(o *ListOptions) { o.Namespace = string(n) }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (n InNamespace) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { o.Namespace = string(n) }

// MatchingLabels selects objects whose labels include all of these.
type MatchingLabels map[string]string

// ApplyToList implements ListOption.
func (m MatchingLabels) ApplyToList(o *ListOptions) { o.LabelSelector = labels.SelectorFromSet(m) }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (m MatchingLabels) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { m.ApplyToList(&o.ListOptions) }

// MatchingLabelSelector selects objects with a label selector.
type MatchingLabelSelector struct{ labels.Selector }

// ApplyToList implements ListOption.
func (m MatchingLabelSelector) ApplyToList(o *ListOptions) { o.LabelSelector = m.Selector }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (m MatchingLabelSelector) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	m.ApplyToList(&o.ListOptions)
}

// MatchingFields selects objects whose fields (metadata.name, spec.nodeName, ...)
// equal these values.
type MatchingFields map[string]string

// ApplyToList implements ListOption.
func (m MatchingFields) ApplyToList(o *ListOptions) { o.FieldSelector = fields.SelectorFromSet(m) }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (m MatchingFields) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { m.ApplyToList(&o.ListOptions) }

// Limit asks for at most this many items per page; the list's continue token
// fetches the next page.
type Limit int64

// ApplyToList implements ListOption.
func (l Limit) ApplyToList(o *ListOptions) { o.Limit = int64(l) }

// Continue fetches the page after the one that returned this token.
type Continue string

// ApplyToList implements ListOption.
func (c Continue) ApplyToList(o *ListOptions) { o.Continue = string(c) }

// ResourceVersion sets the resourceVersion of a List ("0": any) or the version a
// Watch starts after.
type ResourceVersion string

// ApplyToList implements ListOption.
func (r ResourceVersion) ApplyToList(o *ListOptions) { o.ResourceVersion = string(r) }

// AllowWatchBookmarks asks a Watch for BOOKMARK events.
type AllowWatchBookmarks bool

// ApplyToList implements ListOption.
func (b AllowWatchBookmarks) ApplyToList(o *ListOptions) { o.AllowWatchBookmarks = bool(b) }

// WriteOptions are the options of Create, Update and Patch.
type WriteOptions struct {
	// DryRun ["All"] validates without persisting.
	DryRun []string
	// FieldManager names the writer in managedFields.
	FieldManager string
	// Force is sent with apply patches (force=true takes over conflicting fields).
	Force *bool
}

func (o *WriteOptions) query() url.Values {
	q := url.Values{}
	for _, d := range o.DryRun {
		q.Add("dryRun", d)
	}
	if o.FieldManager != "" {
		q.Set("fieldManager", o.FieldManager)
	}
	if o.Force != nil {
		q.Set("force", strconv.FormatBool(*o.Force))
	}
	return q
}

// CreateOption modifies a Create.
type CreateOption interface{ ApplyToCreate(*WriteOptions) }

// UpdateOption modifies an Update.
type UpdateOption interface{ ApplyToUpdate(*WriteOptions) }

// PatchOption modifies a Patch.
type PatchOption interface{ ApplyToPatch(*WriteOptions) }

// DeleteOptions are the options of Delete (sent as the request body).
type DeleteOptions = api.DeleteOptions

// DeleteOption modifies a Delete.
type DeleteOption interface{ ApplyToDelete(*DeleteOptions) }

// DeleteAllOfOptions are the options of DeleteAllOf: which objects, and how.
type DeleteAllOfOptions struct {
	ListOptions
	DeleteOptions DeleteOptions
}

// DeleteAllOfOption modifies a DeleteAllOf.
type DeleteAllOfOption interface{ ApplyToDeleteAllOf(*DeleteAllOfOptions) }

type dryRunAll struct{}

// DryRunAll makes a write validate and return the result without persisting it.
var DryRunAll = dryRunAll{}

// ApplyToCreate implements CreateOption.
func (dryRunAll) ApplyToCreate(o *WriteOptions) { o.DryRun = []string{"All"} }

// ApplyToUpdate implements UpdateOption.
func (dryRunAll) ApplyToUpdate(o *WriteOptions) { o.DryRun = []string{"All"} }

// ApplyToPatch implements PatchOption.
func (dryRunAll) ApplyToPatch(o *WriteOptions) { o.DryRun = []string{"All"} }

// ApplyToDelete implements DeleteOption.
func (dryRunAll) ApplyToDelete(o *DeleteOptions) { o.DryRun = []string{"All"} }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (dryRunAll) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { o.DeleteOptions.DryRun = []string{"All"} }

// FieldOwner sets the fieldManager of a write.
type FieldOwner string

// ApplyToCreate implements CreateOption.
func (f FieldOwner) ApplyToCreate(o *WriteOptions) { o.FieldManager = string(f) }

// ApplyToUpdate implements UpdateOption.
func (f FieldOwner) ApplyToUpdate(o *WriteOptions) { o.FieldManager = string(f) }

// ApplyToPatch implements PatchOption.
func (f FieldOwner) ApplyToPatch(o *WriteOptions) { o.FieldManager = string(f) }

// ForceOwnership sets force=true on apply patches.
var ForceOwnership = forceOwnership{}

type forceOwnership struct{}

// ApplyToPatch implements PatchOption.
func (forceOwnership) ApplyToPatch(o *WriteOptions) { o.Force = api.Ptr(true) }

// PropagationPolicy says how dependents are deleted: api.DeletePropagationBackground,
// Foreground or Orphan.
type PropagationPolicy string

// ApplyToDelete implements DeleteOption.
func (p PropagationPolicy) ApplyToDelete(o *DeleteOptions) { o.PropagationPolicy = api.Ptr(string(p)) }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (p PropagationPolicy) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	p.ApplyToDelete(&o.DeleteOptions)
}

// GracePeriodSeconds sets the deletion grace period.
type GracePeriodSeconds int64

// ApplyToDelete implements DeleteOption.
func (g GracePeriodSeconds) ApplyToDelete(o *DeleteOptions) {
	o.GracePeriodSeconds = api.Ptr(int64(g))
}

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (g GracePeriodSeconds) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	g.ApplyToDelete(&o.DeleteOptions)
}

// Preconditions must hold for a delete (uid and/or resourceVersion); a mismatch is
// a 409 Conflict.
type Preconditions api.Preconditions

// ApplyToDelete implements DeleteOption.
func (p Preconditions) ApplyToDelete(o *DeleteOptions) {
	pc := api.Preconditions(p)
	o.Preconditions = &pc
}

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (p Preconditions) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { p.ApplyToDelete(&o.DeleteOptions) }
