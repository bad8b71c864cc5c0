package apiserver

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/apiserver/fieldmanager"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// fieldManagerMaxLength is the longest fieldManager Kubernetes accepts.
const fieldManagerMaxLength = 128

// managerKey names one field manager: a resource version, the subresource
// written, and what part of the object that write may change.
type managerKey struct {
	res         *registry.Resource
	subresource string
	mode        updateMode
}

// fieldManagers caches a fieldmanager.Manager per managerKey; the registry
// changing (CRDs) empties it.
type fieldManagers struct {
	m sync.Map // managerKey → *fieldmanager.Manager (nil when none can be built)
}

func (f *fieldManagers) reset() { f.m.Clear() }

// fieldManagerFor returns the manager for writes of q in mode, or nil when the
// resource has no schema it can be built from.
func (s *Server) fieldManagerFor(q *request, mode updateMode) *fieldmanager.Manager {
	key := managerKey{res: q.res, subresource: q.ri.subresource, mode: mode}
	if v, ok := s.fields.m.Load(key); ok {
		fm, _ := v.(*fieldmanager.Manager)
		return fm
	}
	fm, err := newFieldManager(q.res, q.ri.subresource, mode)
	if err != nil {
		s.log.Error(err, "no field manager", "resource", q.res.GroupVersionResource().String())
		fm = nil
	}
	s.fields.m.Store(key, fm)
	return fm
}

// openAPISchemer is what a strategy without a Go type offers for field
// management: its objects' structural OpenAPI v3 schema (custom resources).
type openAPISchemer interface {
	OpenAPISchema() map[string]any
}

func newFieldManager(res *registry.Resource, subresource string, mode updateMode) (*fieldmanager.Manager, error) {
	var (
		typ *fieldmanager.Type
		err error
	)
	switch {
	case res.Type != nil:
		typ, err = fieldmanager.TypeOf(res.Type)
	default:
		var s map[string]any
		if os, ok := res.Strategy.(openAPISchemer); ok {
			s = os.OpenAPISchema()
		}
		typ, err = fieldmanager.TypeFromOpenAPI(s, reflect.TypeFor[api.ObjectMeta]())
	}
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", res.GroupVersionResource(), err)
	}
	opts := fieldmanager.Options{Type: typ, APIVersion: res.GroupVersion.String(), Subresource: subresource}
	switch mode {
	case updateStatus:
		opts.Only = []string{"status"}
	case updateMain:
		if res.StatusSubresource {
			opts.Ignore = []string{"status"}
		}
	}
	return fieldmanager.New(opts)
}

// fieldManagerName is the request's field manager: the fieldManager
// parameter, else the User-Agent up to its first '/' (printable characters,
// at most 128 bytes), as Kubernetes derives it.
func fieldManagerName(q *request) string {
	if m := q.query.Get("fieldManager"); m != "" {
		return m
	}
	ua := q.r.UserAgent()
	if i := bytes.IndexByte([]byte(ua), '/'); i >= 0 {
		ua = ua[:i]
	}
	var b bytes.Buffer
	for _, r := range ua {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > fieldManagerMaxLength {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sentFields is what a client sent as metadata.managedFields, taken out of
// the object while the strategy canonicalizes it.
type sentFields struct {
	value   any
	present bool // the object had the key
	taken   bool // a field manager keeps this resource's managedFields
}

// takeManagedFields removes the managedFields a client sent from obj before
// the strategy canonicalizes it, when the resource's managedFields are kept
// by a field manager: it rebuilds them from their field sets, so running them
// through the Go type would be wasted work.
func (s *Server) takeManagedFields(q *request, mode updateMode, obj map[string]any) sentFields {
	if q.applied || s.fieldManagerFor(q, mode) == nil {
		return sentFields{}
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return sentFields{}
	}
	v, present := meta["managedFields"]
	delete(meta, "managedFields")
	return sentFields{value: v, present: present, taken: true}
}

// trackWrite records in obj's managedFields what an Update-operation write
// of q changed from live (nil for a create); sent is what takeManagedFields
// took. Failures keep live's entries, as in Kubernetes: bookkeeping never
// fails a write.
func (s *Server) trackWrite(q *request, mode updateMode, live, obj map[string]any, sent sentFields) {
	s.trackWriteAs(q, mode, live, obj, sent, false, false, time.Time{})
}

// createdFields is the creator's managedFields entry of a create, encoded
// (raw), and either the decoded entries trackCreate left in the object for
// the readers of its managedFields, or nothing in the object (detached).
type createdFields struct {
	raw      api.RawJSON
	entries  []any
	detached bool
}

// trackCreate is trackWrite for a create at the time at (its
// creationTimestamp's), which also builds the creator's entry as the bytes
// encoding it writes (fieldmanager.UpdateEncoded). When nothing reads obj's
// managedFields before it is encoded (decoded false), the entry is built as
// those bytes only and kept out of obj: admission, the strategy and
// validation see obj without it (they ignore managedFields), and encodeIn
// puts the bytes in. Else obj holds the decoded entry, and encodeIn puts the
// bytes in its place once the readers are done.
func (s *Server) trackCreate(q *request, obj map[string]any, sent sentFields, at time.Time, decoded bool) createdFields {
	raw := s.trackWriteAs(q, updateMain, nil, obj, sent, true, decoded, at)
	if raw == nil {
		return createdFields{}
	}
	if !decoded {
		delete(metaOf(obj), "managedFields")
		return createdFields{raw: raw, detached: true}
	}
	entries, _ := metaOf(obj)["managedFields"].([]any)
	return createdFields{raw: raw, entries: entries}
}

// encodeIn puts the encoding of c's entry in obj, for encoding obj: when it
// was kept out of obj, or in place of the decoded entries when obj still
// holds them (a plugin that changed the object has it canonicalized again,
// which decodes new entries).
func (c createdFields) encodeIn(obj map[string]any) {
	if c.detached {
		metaOf(obj)["managedFields"] = c.raw
		return
	}
	if len(c.entries) == 0 {
		return
	}
	meta, _ := obj["metadata"].(map[string]any)
	if cur, ok := meta["managedFields"].([]any); ok && len(cur) == len(c.entries) && &cur[0] == &c.entries[0] {
		meta["managedFields"] = c.raw
	}
}

// invalidManagedFieldsWarning is the warning of a request whose
// managedFields a mutating admission plugin left invalid, in Kubernetes'
// words.
const invalidManagedFieldsWarning = ".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: %v"

// keepValidManagedFields gives obj back the managedFields it had before
// mutating admission (before; had says whether it had the key) when the
// plugins left it invalid ones, with a warning to the client, as
// kube-apiserver's managedFields check after mutating admission does.
// Entries a plugin changed into other valid ones are kept.
func keepValidManagedFields(q *request, obj map[string]any, before any, had bool) {
	meta, _ := obj["metadata"].(map[string]any)
	after, has := meta["managedFields"]
	if has == had && sameValue(after, before) {
		return
	}
	err := fieldmanager.ValidateManagedFields(after)
	if err == nil {
		return
	}
	if had {
		metaOf(obj)["managedFields"] = before
	} else if meta != nil {
		delete(meta, "managedFields")
	}
	addWarning(q.w, fmt.Sprintf(invalidManagedFieldsWarning, err))
}

// sameValue reports whether a and b are the very same list, or both nil:
// entries a plugin did not touch.
func sameValue(a, b any) bool {
	la, okA := a.([]any)
	lb, okB := b.([]any)
	if okA && okB {
		return len(la) == len(lb) && (len(la) == 0 || &la[0] == &lb[0])
	}
	return a == nil && b == nil
}

func (s *Server) trackWriteAs(q *request, mode updateMode, live, obj map[string]any, sent sentFields, encoded, decoded bool, at time.Time) api.RawJSON {
	if q.applied {
		return nil
	}
	fm := s.fieldManagerFor(q, mode)
	if fm == nil || !sent.taken {
		// Without a schema, entries are only carried over.
		if meta, ok := obj["metadata"].(map[string]any); ok && live != nil {
			if _, has := meta["managedFields"]; !has {
				if v, ok := metaOf(live)["managedFields"]; ok {
					meta["managedFields"] = v
				}
			}
		}
		return nil
	}
	if sent.present {
		metaOf(obj)["managedFields"] = sent.value
	}
	var (
		raw api.RawJSON
		err error
	)
	if encoded {
		raw, err = fm.UpdateEncoded(live, obj, fieldManagerName(q), at, decoded)
	} else {
		err = fm.Update(live, obj, fieldManagerName(q))
	}
	if err != nil {
		s.log.V(1).Info("managed fields not updated", "resource", q.res.GroupVersionResource().String(), "error", err.Error())
	}
	return raw
}

// unsentAdmissionDefaults are the AdmissionDefaults of res that the client's
// obj does not hold: absent, null or empty (omitted by Kubernetes' decoding).
func unsentAdmissionDefaults(res *registry.Resource, obj map[string]any) [][]string {
	var out [][]string
	for _, p := range res.AdmissionDefaults {
		if len(p) == 0 || p[0] == "metadata" {
			continue
		}
		v, _ := api.NestedField(obj, p...)
		switch t := v.(type) {
		case nil:
		case []any:
			if len(t) > 0 {
				continue
			}
		case map[string]any:
			if len(t) > 0 {
				continue
			}
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// withoutFields is obj without the fields at paths, for the field manager:
// the maps on the way to each are copied (obj is not changed), any other
// value is shared, metadata included, so that the managedFields the field
// manager sets are obj's.
func withoutFields(obj map[string]any, paths [][]string) map[string]any {
	if len(paths) == 0 {
		return obj
	}
	out := maps.Clone(obj)
	for _, p := range paths {
		m := out
		for i, k := range p {
			if i == len(p)-1 {
				delete(m, k)
				break
			}
			next, ok := m[k].(map[string]any)
			if !ok {
				break
			}
			next = maps.Clone(next)
			m[k] = next
			m = next
		}
	}
	return out
}

// validateFieldManagerOptions checks fieldManager and force as Kubernetes'
// ValidatePatchOptions (and the create and update ones) do: fieldManager at
// most 128 printable characters and required for apply; force only on apply.
func validateFieldManagerOptions(q *request) field.ErrorList {
	var errs field.ErrorList
	p := func() *field.Path { return field.NewPath("fieldManager") } // made for errors only
	fm := q.query.Get("fieldManager")
	if q.r.Method == http.MethodPatch {
		if contentType(q.r) == mediaApplyPatch {
			if fm == "" {
				errs = append(errs, field.Required(p(), "is required for apply patch"))
			}
		} else if _, ok := q.query["force"]; ok {
			errs = append(errs, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch"))
		}
	}
	if len(fm) > fieldManagerMaxLength {
		errs = append(errs, field.TooLong(p(), "", fieldManagerMaxLength))
	}
	for i, r := range fm {
		if !unicode.IsPrint(r) {
			errs = append(errs, field.Invalid(p(), fm, fmt.Sprintf("invalid character %#U (at position %d)", r, i)))
		}
	}
	return errs
}

// metaForValidation decodes obj's metadata for validation. managedFields'
// field sets take no part in it, so only the entries' names are read, by
// hand; entries of the wrong shape fall back to decoding everything, which
// reports them.
func metaForValidation(obj map[string]any) (api.ObjectMeta, error) {
	stripped, mf, present := fieldmanager.WithoutManagedFields(obj)
	if !present {
		return api.MetaFromMap(obj)
	}
	list, ok := mf.([]any)
	if !ok && mf != nil {
		return api.MetaFromMap(obj)
	}
	entries := make([]api.ManagedFieldsEntry, 0, len(list))
	for _, e := range list {
		em, ok := e.(map[string]any)
		if !ok {
			return api.MetaFromMap(obj)
		}
		var me api.ManagedFieldsEntry
		for _, f := range [...]struct {
			key string
			dst *string
		}{{"manager", &me.Manager}, {"operation", &me.Operation}, {"apiVersion", &me.APIVersion},
			{"fieldsType", &me.FieldsType}, {"subresource", &me.Subresource}} {
			switch v := em[f.key].(type) {
			case string:
				*f.dst = v
			case nil:
			default:
				return api.MetaFromMap(obj)
			}
		}
		entries = append(entries, me)
	}
	m, err := api.MetaFromMap(stripped)
	if err != nil {
		return m, err
	}
	m.ManagedFields = entries
	return m, nil
}
