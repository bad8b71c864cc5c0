package fieldmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	b, _ := json.Marshal(id)
	return string(b)
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
}

type rawSet struct {
	set    fieldpath.VersionedSet
	fields any
}

func newManaged() *managed {
	return &managed{fields: fieldpath.ManagedFields{}, times: map[string]string{}, raw: map[string]rawSet{}}
}

// errBadEntry is wrapped by decode's errors.
var errBadEntry = errors.New("invalid managedFields entry")

// decodeManaged reads metadata.managedFields as the JSON decoder left it.
func decodeManaged(v any) (*managed, error) {
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
		set, err := ParseFieldsV1(em["fieldsV1"])
		if err != nil {
			return nil, fmt.Errorf("%w %d: %w", errBadEntry, i, err)
		}
		key := id.key()
		vs := fieldpath.NewVersionedSet(set, fieldpath.APIVersion(id.APIVersion), id.Operation == OperationApply)
		m.fields[key] = vs
		m.raw[key] = rawSet{set: vs, fields: em["fieldsV1"]}
		if t := str("time"); t != "" {
			m.times[key] = t
		}
	}
	return m, nil
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

// FieldsV1 encodes set in Kubernetes' FieldsV1 form, decoded to JSON values.
func FieldsV1(set *fieldpath.Set) (map[string]any, error) {
	b, err := set.ToJSON()
	if err != nil {
		return nil, fmt.Errorf("encode field set: %w", err)
	}
	return api.DecodeMap(b)
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
		id := parseKey(key)
		id.APIVersion = string(vs.APIVersion())
		if vs.Applied() {
			id.Operation = OperationApply
		}
		var fields any
		if r, ok := m.raw[key]; ok && r.set == vs {
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
