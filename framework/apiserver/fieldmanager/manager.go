package fieldmanager

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Names Kubernetes gives to managers the server makes up.
const (
	// beforeFirstApply owns what an object held when it was first applied
	// to without any managedFields.
	beforeFirstApply = "before-first-apply"
	// ancientChanges collects the oldest Update entries beyond the cap.
	ancientChanges = "ancient-changes"
	// kubectlManager is kubectl's default field manager for apply, the one
	// the client-side apply upgrade is for.
	kubectlManager = "kubectl"
	// LastAppliedAnnotation is client-side apply's record of what was applied.
	LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"
)

// maxUpdateManagers is how many Update entries an object keeps (Kubernetes'
// DefaultMaxUpdateManagers); older ones are merged into ancient-changes.
const maxUpdateManagers = 10

// Options configure a Manager.
type Options struct {
	// Type is the merge schema of the objects. Required.
	Type *Type
	// APIVersion is the group/version of the objects the manager sees
	// ("apps/v1"), recorded in the entries it writes. Required.
	APIVersion string
	// Subresource is recorded in the entries ("status"); empty for the main
	// resource.
	Subresource string
	// Only, when set, restricts what is owned to these top-level fields (a
	// status subresource owns only status).
	Only []string
	// Ignore names top-level fields whose changes are neither owned nor
	// conflicting (status on the main resource when there is a status
	// subresource).
	Ignore []string
	// Now gives entry times; nil means time.Now.
	Now func() time.Time
	// LibraryCreates computes the fields of creates through the library's
	// comparison as any other Update, not in one walk of the object (tests
	// compare the two).
	LibraryCreates bool
}

// Manager records managed fields for writes to one resource version (and
// subresource) and computes applies.
type Manager struct {
	typ         *Type
	apiVersion  string
	subresource string
	filter      fieldpath.Filter
	updater     merge.Updater
	now         func() time.Time
	sets        setCache
	// only and ignored are the top-level fields of Options.Only and
	// Options.Ignore, for the walk of creates.
	only           []string
	ignored        map[string]bool
	libraryCreates bool
	lastStamp      atomic.Pointer[stampCache]
}

// New returns a Manager.
func New(opts Options) (*Manager, error) {
	if opts.Type == nil {
		return nil, errors.New("fieldmanager: Type is required")
	}
	if opts.APIVersion == "" {
		return nil, errors.New("fieldmanager: APIVersion is required")
	}
	m := &Manager{typ: opts.Type, apiVersion: opts.APIVersion, subresource: opts.Subresource, now: opts.Now,
		only: opts.Only, libraryCreates: opts.LibraryCreates}
	for _, f := range opts.Ignore {
		if m.ignored == nil {
			m.ignored = map[string]bool{}
		}
		m.ignored[f] = true
	}
	if m.now == nil {
		m.now = time.Now
	}
	switch {
	case len(opts.Only) > 0:
		var ms []*fieldpath.SetMatcher
		for _, f := range opts.Only {
			ms = append(ms, fieldpath.MakePrefixMatcherOrDie(f))
		}
		m.filter = fieldpath.NewIncludeMatcherFilter(ms...)
	case len(opts.Ignore) > 0:
		set := fieldpath.NewSet()
		for _, f := range opts.Ignore {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		m.filter = fieldpath.NewExcludeSetFilter(set)
	}
	m.updater = merge.Updater{Converter: sameSchema{}}
	if m.filter != nil {
		m.updater.IgnoreFilter = map[fieldpath.APIVersion]fieldpath.Filter{fieldpath.APIVersion(opts.APIVersion): m.filter}
	}
	return m, nil
}

// sameSchema compares objects of another version as if they had this
// version's schema: versions of one kind here share their field layout, and
// entries of another version must not be dropped.
type sameSchema struct{}

func (sameSchema) Convert(obj *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return obj, nil
}

func (sameSchema) IsMissingVersionError(error) bool { return false }

// stripSet lists the metadata fields no manager owns, as in Kubernetes.
var stripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// idIn is the key of the sets of manager's writes of operation; it records
// the identity in mg (when not nil), so that encoding mg need not parse the
// key back.
func (m *Manager) idIn(mg *managed, manager, operation string) string {
	if manager == "" {
		manager = "unknown"
	}
	id := identity{Manager: manager, Operation: operation, APIVersion: m.apiVersion, Subresource: m.subresource}
	key := id.key()
	if mg != nil {
		mg.ids[key] = id
	}
	return key
}

// stamp is the time of an entry written now: whole seconds, formatted once
// a second.
func (m *Manager) stamp() string { return m.stampAt(time.Time{}) }

// stampAt is stamp for an entry written at t (zero: now).
func (m *Manager) stampAt(t time.Time) string {
	if t.IsZero() {
		t = m.now()
	}
	sec := t.Unix()
	if c := m.lastStamp.Load(); c != nil && c.sec == sec {
		return c.s
	}
	s := t.UTC().Format(time.RFC3339)
	m.lastStamp.Store(&stampCache{sec: sec, s: s})
	return s
}

type stampCache struct {
	sec int64
	s   string
}

// WithoutManagedFields returns obj, or when its metadata has managedFields a
// shallow copy of obj whose metadata (also a shallow copy) lacks them, and
// what managedFields held (present says whether the key was there). obj is
// not changed.
func WithoutManagedFields(obj map[string]any) (out map[string]any, mf any, present bool) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return obj, nil, false
	}
	mf, present = meta["managedFields"]
	if !present {
		return obj, nil, false
	}
	out = make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	nm := make(map[string]any, len(meta))
	for k, v := range meta {
		if k != "managedFields" {
			nm[k] = v
		}
	}
	out["metadata"] = nm
	return out, mf, true
}

func setManagedFields(obj map[string]any, entries []any) {
	if entries == nil {
		if meta, ok := obj["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
		return
	}
	setManagedFieldsValue(obj, entries)
}

// setManagedFieldsValue sets obj's metadata.managedFields to v.
func setManagedFieldsValue(obj map[string]any, v any) {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["managedFields"] = v
}

// Update records in obj's metadata.managedFields what an Update by manager
// changed from live to obj (live is nil for a create). obj's own
// managedFields, when a client sent valid ones on the main resource, replace
// live's; an empty list (or one empty entry) clears them. An object that has
// none and already exists stays without (Kubernetes starts tracking on create
// or apply). On an error obj keeps live's managedFields, as Kubernetes does.
func (m *Manager) Update(live, obj map[string]any, manager string) error {
	_, err := m.update(live, obj, manager, false, false, time.Time{})
	return err
}

// UpdateEncoded is Update at the time of the write (at; zero is now) that
// also returns, for a create whose fields the walk of creates computes, its
// managedFields as the bytes AppendJSON writes for them (an api.RawJSON,
// built from the walk; nil for any other write). With decoded false obj
// holds those bytes instead of the decoded entries, for a caller that
// encodes obj before anything reads it (the API server's create path);
// with decoded true obj holds the decoded entries, and the caller may put
// the bytes in their place to encode obj while they are untouched.
func (m *Manager) UpdateEncoded(live, obj map[string]any, manager string, at time.Time, decoded bool) (api.RawJSON, error) {
	return m.update(live, obj, manager, true, decoded, at)
}

func (m *Manager) update(live, obj map[string]any, manager string, encoded, decoded bool, at time.Time) (api.RawJSON, error) {
	newObj, newMF, newHas := WithoutManagedFields(obj)
	if live == nil && !m.libraryCreates && (!newHas || newMF == nil || isReset(newMF)) {
		if encoded && !decoded {
			// The API server's creates: the entry written as the walk goes.
			if raw, nonEmpty, ok := m.appendCreateEntryOf(newObj, manager, at); ok {
				if !nonEmpty {
					setManagedFields(obj, nil)
					return nil, nil
				}
				setManagedFieldsValue(obj, raw)
				return raw, nil
			}
		}
		w := getWalk()
		defer putWalk(w)
		if fields, ok := m.createFields(w, newObj); ok {
			if fields.empty() {
				setManagedFields(obj, nil)
				return nil, nil
			}
			stamp := m.stampAt(at)
			var raw api.RawJSON
			if encoded {
				raw = m.appendCreateEntry(make([]byte, 0, 256), fields, manager, stamp)
			}
			if encoded && !decoded {
				setManagedFieldsValue(obj, raw)
			} else {
				setManagedFields(obj, []any{m.createEntry(fields, manager, stamp)})
			}
			return raw, nil
		}
	}
	liveObj, liveMF, _ := WithoutManagedFields(m.orZero(live))
	var mg *managed
	switch {
	case m.subresource == "" && newHas && isReset(newMF):
		mg = newManaged()
	default:
		var err error
		// A client that sends back what it read (the usual update) sends
		// the stored entries: they are read as such.
		if m.subresource == "" && newHas && !jsonEqual(newMF, liveMF) {
			mg, err = m.sets.decodeManaged(newMF, false)
		} else {
			newHas = false
		}
		if m.subresource != "" || !newHas || err != nil || len(mg.fields) == 0 {
			if mg, err = m.sets.decodeManaged(liveMF, true); err != nil {
				mg = newManaged()
			}
		}
	}
	if len(mg.fields) == 0 && api.NestedString(liveObj, "metadata", "uid") != "" {
		setManagedFields(obj, nil)
		return nil, nil
	}
	if err := m.updateSets(liveObj, newObj, mg, m.idIn(mg, manager, OperationUpdate)); err != nil {
		setManagedFields(obj, liveMFOrNil(liveMF))
		return nil, err
	}
	entries, err := mg.encode()
	if err != nil {
		setManagedFields(obj, liveMFOrNil(liveMF))
		return nil, err
	}
	setManagedFields(obj, entries)
	return nil, nil
}

// createEntry is the managedFields entry of a create by manager owning
// fields (not empty) at stamp.
func (m *Manager) createEntry(fields fnode, manager, stamp string) map[string]any {
	if manager == "" {
		manager = "unknown"
	}
	e := map[string]any{"manager": manager, "operation": OperationUpdate, "apiVersion": m.apiVersion,
		"fieldsType": fieldsTypeV1, "fieldsV1": fields.toMap(), "time": stamp}
	if m.subresource != "" {
		e["subresource"] = m.subresource
	}
	return e
}

// appendCreateEntry appends the managedFields of a create at stamp,
// [createEntry], as AppendJSON writes them (an object's keys sorted).
func (m *Manager) appendCreateEntry(b []byte, fields fnode, manager, stamp string) []byte {
	b = m.appendEntryHead(b)
	b = fields.appendJSON(b)
	return m.appendEntryTail(b, manager, stamp)
}

// appendCreateEntryOf is appendCreateEntry for a create of obj by manager at
// t (zero: now), its set written by the emitter; nonEmpty is false when the
// create owns nothing, ok false when the emitter gives up.
func (m *Manager) appendCreateEntryOf(obj map[string]any, manager string, t time.Time) (_ api.RawJSON, nonEmpty, ok bool) {
	b := m.appendEntryHead(make([]byte, 0, 256))
	if b, nonEmpty, ok = m.appendCreateFields(b, obj); !ok || !nonEmpty {
		return nil, nonEmpty, ok
	}
	return m.appendEntryTail(b, manager, m.stampAt(t)), true, true
}

// appendEntryHead appends a create's entry up to its fieldsV1 value (the
// keys before it in AppendJSON's order).
func (m *Manager) appendEntryHead(b []byte) []byte {
	b = append(b, `[{"apiVersion":`...)
	b = api.AppendJSONString(b, m.apiVersion)
	return append(b, `,"fieldsType":"`+fieldsTypeV1+`","fieldsV1":`...)
}

// appendEntryTail appends the rest of a create's entry after its fieldsV1.
func (m *Manager) appendEntryTail(b []byte, manager, stamp string) []byte {
	if manager == "" {
		manager = "unknown"
	}
	b = append(b, `,"manager":`...)
	b = api.AppendJSONString(b, manager)
	b = append(b, `,"operation":"`+OperationUpdate+`"`...)
	if m.subresource != "" {
		b = append(b, `,"subresource":`...)
		b = api.AppendJSONString(b, m.subresource)
	}
	b = append(b, `,"time":`...)
	b = api.AppendJSONString(b, stamp)
	return append(b, "}]"...)
}

func liveMFOrNil(v any) []any {
	s, _ := v.([]any)
	return s
}

// orZero is obj, or the type's empty object when obj is nil (a create).
func (m *Manager) orZero(obj map[string]any) map[string]any {
	if obj == nil {
		return m.typ.zero
	}
	return obj
}

// updateSets runs an Update of id from live to obj (neither holding
// managedFields) over mg: the changed fields are added to id's set, taken
// from other managers' sets, and id's time is now; then the Update entries
// are capped.
func (m *Manager) updateSets(live, obj map[string]any, mg *managed, id string) error {
	// Both objects passed the strategy's decoding; the comparison reports
	// what does not fit the schema, so they are not validated first.
	liveTV := m.typ.unvalidated(live)
	newTV := m.typ.unvalidated(obj)
	fields, changed, err := m.updateTyped(liveTV, newTV, mg.fields, id)
	if err != nil {
		return err
	}
	mg.fields = fields
	if changed {
		mg.times[id] = m.stamp()
	}
	m.capUpdates(mg)
	return nil
}

// updateTyped adds what changed from liveTV to newTV to id's set and takes
// it from every other manager (an update always wins), as structured-merge-
// diff's Updater.Update does for one version; changed says whether anything
// changed (only then is id's time renewed). It skips the Updater's
// reconciliation of every set with the schema, which only matters when a
// schema changes under stored sets.
func (m *Manager) updateTyped(liveTV, newTV *typed.TypedValue, fields fieldpath.ManagedFields, id string) (fieldpath.ManagedFields, bool, error) {
	cmp, err := liveTV.Compare(newTV)
	if err != nil {
		return nil, false, fmt.Errorf("compare objects: %w", err)
	}
	if m.filter != nil {
		cmp = cmp.FilterFields(m.filter)
	}
	if cmp.IsSame() {
		return fields, false, nil
	}
	changed := cmp.Modified.Union(cmp.Added)
	taken := changed.Union(cmp.Removed)
	for k, vs := range fields {
		rest := vs.Set().Difference(taken)
		if rest.Equals(vs.Set()) {
			continue
		}
		if rest.Empty() {
			delete(fields, k)
			continue
		}
		fields[k] = fieldpath.NewVersionedSet(rest, vs.APIVersion(), vs.Applied())
	}
	own := changed.Difference(stripSet)
	if own.Empty() {
		return fields, false, nil
	}
	if prev, ok := fields[id]; ok {
		own = own.Union(prev.Set())
	}
	fields[id] = fieldpath.NewVersionedSet(own, fieldpath.APIVersion(m.apiVersion), false)
	return fields, true, nil
}

// strip removes the fields no one owns from manager's set, and the manager
// when nothing is left.
func strip(fields fieldpath.ManagedFields, manager string) {
	vs, ok := fields[manager]
	if !ok {
		return
	}
	set := vs.Set().Difference(stripSet)
	if set.Empty() {
		delete(fields, manager)
		return
	}
	fields[manager] = fieldpath.NewVersionedSet(set, vs.APIVersion(), vs.Applied())
}

// capUpdates merges the oldest Update entries of each version into one
// ancient-changes entry while there are more than maxUpdateManagers.
func (m *Manager) capUpdates(mg *managed) {
	var updaters []string
	for k, vs := range mg.fields {
		if !vs.Applied() {
			updaters = append(updaters, k)
		}
	}
	if len(updaters) <= maxUpdateManagers {
		return
	}
	secs := func(k string) int64 {
		t, err := time.Parse(time.RFC3339, mg.times[k])
		if err != nil {
			return 0
		}
		return t.Unix()
	}
	sortByTime(updaters, secs)
	first := map[fieldpath.APIVersion]string{}
	for i, n := 0, len(updaters); i < len(updaters) && n > maxUpdateManagers; i++ {
		k := updaters[i]
		vs := mg.fields[k]
		t := mg.times[k]
		bucket := identity{Manager: ancientChanges, Operation: OperationUpdate, APIVersion: string(vs.APIVersion())}.key()
		f, ok := first[vs.APIVersion()]
		if !ok {
			first[vs.APIVersion()] = k
			continue
		}
		if _, ok := mg.fields[bucket]; !ok {
			mg.fields[bucket] = mg.fields[f]
			delete(mg.fields, f)
		}
		mg.fields[bucket] = fieldpath.NewVersionedSet(vs.Set().Union(mg.fields[bucket].Set()), vs.APIVersion(), false)
		delete(mg.fields, k)
		n--
		mg.times[bucket] = t
	}
}
