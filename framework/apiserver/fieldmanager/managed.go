package fieldmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/converge-dev/converge/framework/api"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Operations of a managedFields entry.
const (
	OperationApply  = "Apply"
	OperationUpdate = "Update"
)

// fieldsTypeV1 is the only fieldsType Kubernetes defines.
const fieldsTypeV1 = "FieldsV1"

// identity is what tells managedFields entries apart, as Kubernetes encodes it
// into the manager key of its sets: the entry without time and fields, and
// without apiVersion for Apply entries (an applier owns its fields whatever
// the version it applied).
type identity struct {
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

func (id identity) key() string {
	if id.Operation == OperationApply {
		id.APIVersion = ""
	}
	// The JSON encoding of id (fields in order, empty ones left out), built
	// by hand: keys are made on every write.
	b := make([]byte, 0, 64+len(id.Manager))
	b = append(b, '{')
	for _, f := range [...]struct{ name, value string }{
		{"manager", id.Manager}, {"operation", id.Operation}, {"apiVersion", id.APIVersion}, {"subresource", id.Subresource},
	} {
		if f.value == "" {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, f.name...)
		b = append(b, '"', ':')
		b, _ = api.AppendJSON(b, f.value)
	}
	return string(append(b, '}'))
}

func parseKey(k string) identity {
	var id identity
	_ = json.Unmarshal([]byte(k), &id)
	return id
}

// managed is the decoded managedFields of an object: each manager's versioned
// set and time. raw keeps the decoded fieldsV1 of each set as it was read, so
// sets that did not change are written back without encoding them again.
type managed struct {
	fields fieldpath.ManagedFields
	times  map[string]string
	raw    map[string]rawSet
	ids    map[string]identity // the identities of the keys read
}

type rawSet struct {
	set    fieldpath.VersionedSet
	fields any
}

func newManaged() *managed {
	return &managed{fields: fieldpath.ManagedFields{}, times: map[string]string{}, raw: map[string]rawSet{}, ids: map[string]identity{}}
}

// errBadEntry is wrapped by decode's errors.
var errBadEntry = errors.New("invalid managedFields entry")

// setCache remembers the sets parsed from FieldsV1 JSON: objects are written
// again and again with the same field sets, and parsing them costs more than
// encoding them to look them up. Sets are never changed once built (every set
// operation returns a new set), so they are shared. Safe for concurrent use.
type setCache struct {
	mu   sync.Mutex
	sets map[string]*fieldpath.Set // by FieldsV1 JSON; guarded by mu
}

// maxCachedSets bounds a setCache; it starts over when full.
const maxCachedSets = 4096

// parse returns the set of the FieldsV1 value v (decoded JSON; nil is empty).
func (c *setCache) parse(v any) (*fieldpath.Set, error) {
	if v == nil {
		return fieldpath.NewSet(), nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("fieldsV1 must be an object")
	}
	var buf [512]byte
	b, err := api.AppendJSON(buf[:0], v)
	if err != nil {
		return nil, fmt.Errorf("encode fieldsV1: %w", err)
	}
	c.mu.Lock()
	set, ok := c.sets[string(b)]
	c.mu.Unlock()
	if ok {
		return set, nil
	}
	set = fieldpath.NewSet()
	if err := set.FromJSON(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("parse fieldsV1: %w", err)
	}
	c.mu.Lock()
	if len(c.sets) >= maxCachedSets || c.sets == nil {
		c.sets = make(map[string]*fieldpath.Set, 64)
	}
	c.sets[string(b)] = set
	c.mu.Unlock()
	return set, nil
}

// decodeManaged reads metadata.managedFields as the JSON decoder left it.
// stored says they are the stored object's: their fieldsV1 may then be
// written back as they are when a set does not change (a client's are always
// encoded anew).
func (c *setCache) decodeManaged(v any, stored bool) (*managed, error) {
	entries, ok := v.([]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("%w: managedFields must be a list", errBadEntry)
	}
	m := newManaged()
	for i, e := range entries {
		em, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w %d: not an object", errBadEntry, i)
		}
		str := func(k string) string { s, _ := em[k].(string); return s }
		id := identity{Manager: str("manager"), Operation: str("operation"), APIVersion: str("apiVersion"), Subresource: str("subresource")}
		switch id.Operation {
		case OperationApply, OperationUpdate:
		default:
			return nil, fmt.Errorf("%w %d: operation must be `Apply` or `Update`", errBadEntry, i)
		}
		if id.APIVersion == "" {
			return nil, fmt.Errorf("%w %d: apiVersion must not be empty", errBadEntry, i)
		}
		switch ft := str("fieldsType"); ft {
		case fieldsTypeV1:
		case "":
			return nil, fmt.Errorf("%w %d: missing fieldsType", errBadEntry, i)
		default:
			return nil, fmt.Errorf("%w %d: invalid fieldsType %q", errBadEntry, i, ft)
		}
		set, err := c.parse(em["fieldsV1"])
		if err != nil {
			return nil, fmt.Errorf("%w %d: %w", errBadEntry, i, err)
		}
		key := id.key()
		m.ids[key] = id
		vs := fieldpath.NewVersionedSet(set, fieldpath.APIVersion(id.APIVersion), id.Operation == OperationApply)
		m.fields[key] = vs
		if stored {
			m.raw[key] = rawSet{set: vs, fields: em["fieldsV1"]}
		}
		if t := str("time"); t != "" {
			m.times[key] = t
		}
	}
	return m, nil
}

// ValidateManagedFields checks a metadata.managedFields value as decoded
// from JSON as Kubernetes' ValidateManagedFields does: a list (or null) of
// entries with operation Apply or Update, an apiVersion, fieldsType FieldsV1
// and a fieldsV1 that is a field set.
func ValidateManagedFields(v any) error {
	_, err := (&setCache{}).decodeManaged(v, false)
	return err
}

// ParseFieldsV1 parses a FieldsV1 value as decoded from JSON (nil is the empty
// set).
func ParseFieldsV1(v any) (*fieldpath.Set, error) {
	set := fieldpath.NewSet()
	if v == nil {
		return set, nil
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("fieldsV1 must be an object")
	}
	b, err := api.EncodeJSON(v)
	if err != nil {
		return nil, fmt.Errorf("encode fieldsV1: %w", err)
	}
	if err := set.FromJSON(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("parse fieldsV1: %w", err)
	}
	return set, nil
}

// FieldsV1 encodes set in Kubernetes' FieldsV1 form, as decoded JSON: each
// member and child is keyed by its serialized path element, a child that is
// also a member holds ".", as structured-merge-diff's Set.ToJSON writes it
// (built directly, without the round trip through JSON text).
func FieldsV1(set *fieldpath.Set) (map[string]any, error) {
	return fieldsV1(set, false)
}

func fieldsV1(set *fieldpath.Set, self bool) (map[string]any, error) {
	out := make(map[string]any, set.Members.Size()+set.Children.Size()+1)
	if self && !set.Empty() {
		out["."] = map[string]any{}
	}
	var err error
	set.Members.Iterate(func(pe fieldpath.PathElement) {
		if err != nil {
			return
		}
		var k string
		if k, err = fieldpath.SerializePathElement(pe); err == nil {
			out[k] = map[string]any{}
		}
	})
	set.Children.Iterate(func(pe fieldpath.PathElement) {
		if err != nil {
			return
		}
		var k string
		if k, err = fieldpath.SerializePathElement(pe); err != nil {
			return
		}
		child, _ := set.Children.Get(pe)
		var m map[string]any
		if m, err = fieldsV1(child, set.Members.Has(pe)); err == nil {
			out[k] = m
		}
	})
	if err != nil {
		return nil, fmt.Errorf("encode field set: %w", err)
	}
	return out, nil
}

// encode renders m as metadata.managedFields entries in Kubernetes' order:
// operation, time, manager, apiVersion, subresource. It returns nil when no
// manager is left.
func (m *managed) encode() ([]any, error) {
	if len(m.fields) == 0 {
		return nil, nil
	}
	type row struct {
		id    identity
		secs  int64
		entry map[string]any
	}
	rows := make([]row, 0, len(m.fields))
	for key, vs := range m.fields {
		id, ok := m.ids[key]
		if !ok {
			id = parseKey(key)
		}
		id.APIVersion = string(vs.APIVersion())
		if vs.Applied() {
			id.Operation = OperationApply
		}
		var fields any
		if r, ok := m.raw[key]; ok && (r.set == vs || r.set.Set().Equals(vs.Set())) {
			fields = r.fields
		} else {
			f, err := FieldsV1(vs.Set())
			if err != nil {
				return nil, err
			}
			fields = f
		}
		e := map[string]any{
			"manager": id.Manager, "operation": id.Operation, "apiVersion": id.APIVersion,
			"fieldsType": fieldsTypeV1, "fieldsV1": fields,
		}
		if id.Manager == "" {
			delete(e, "manager")
		}
		if id.Subresource != "" {
			e["subresource"] = id.Subresource
		}
		var secs int64
		if t, ok := m.times[key]; ok {
			e["time"] = t
			if pt, err := time.Parse(time.RFC3339, t); err == nil {
				secs = pt.Unix()
			}
		}
		rows = append(rows, row{id: id, secs: secs, entry: e})
	}
	slices.SortFunc(rows, func(p, q row) int {
		if c := strings.Compare(p.id.Operation, q.id.Operation); c != 0 {
			return c
		}
		if p.secs != q.secs {
			if p.secs < q.secs {
				return -1
			}
			return 1
		}
		if c := strings.Compare(p.id.Manager, q.id.Manager); c != 0 {
			return c
		}
		if c := strings.Compare(p.id.APIVersion, q.id.APIVersion); c != 0 {
			return c
		}
		return strings.Compare(p.id.Subresource, q.id.Subresource)
	})
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r.entry
	}
	return out, nil
}

// isReset reports whether a client asked to clear managedFields: an empty
// list, or a list of one empty entry.
func isReset(v any) bool {
	entries, ok := v.([]any)
	if !ok {
		return false
	}
	if len(entries) == 0 {
		return true
	}
	if len(entries) == 1 {
		if e, ok := entries[0].(map[string]any); ok && len(e) == 0 {
			return true
		}
	}
	return false
}
