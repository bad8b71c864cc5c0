package fieldmanager

import (
	"maps"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"strconv"
	"sync"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// A create's Update compares the new object with the type's empty one, so
// its manager owns exactly what the object holds beyond that. createFields
// computes that set in one walk of the object over a compiled form of the
// schema, building the FieldsV1 value directly, instead of the library's
// comparison, field set and encoding (most of a create's bookkeeping). It
// follows the comparison's rules (typed/compare.go in structured-merge-diff):
//
//   - a value absent from the empty object is added: its path is owned, and,
//     when it is a non-empty map of a granular map type or a non-empty list of
//     an associative list type, so is everything in it; any other value
//     (scalars, atomic or empty maps and lists, nulls) is owned as a whole;
//   - a value in both is owned only when it differs, as a whole when either
//     is a leaf as above, else through its changed fields (the path itself is
//     then not owned).
//
// Whatever the comparison would report as an error (an unknown field, a list
// item without its keys, a value that does not fit its type) or handles
// specially (duplicate list items) makes the walk give up (ok false): the
// caller then runs the comparison, so the result is always the library's.
// TestCreateFieldsMatchLibrary and FuzzCreateFields hold the two to the same
// bytes.

// cnode is one type of the schema, resolved.
type cnode struct {
	hasMap, hasScalar, hasList bool
	// invalid: the type does not resolve (the comparison reports an error).
	invalid bool

	mapAtomic bool
	fields    map[string]cfield // a struct's fields
	elem      *cnode            // the type of other keys; nil when there are none

	// stripped are the fields of this map no one owns (stripSet), when it
	// is the root or its metadata.
	stripped map[string]bool

	listAssoc bool
	item      *cnode
	keys      []string
	keyDefs   []any // the default of each key (nil: none)
}

// cfield is a struct field: its type and its FieldsV1 key ("f:name");
// stripped when no one owns it (the root's and its metadata's fields of
// stripSet; their cnode's stripped names them too).
type cfield struct {
	n        *cnode
	key      string
	stripped bool
}

// compiled is a Type's schema resolved into cnodes, built on first use.
// zeroKnown: every key of every map of the Type's zero object has a type
// where it is (n.field), so that the walk of creates need not check the
// keys of the zero object's maps the object lacks (changedMap).
type compiled struct {
	once      sync.Once
	root      *cnode
	zeroKnown bool
}

type compiler struct {
	s     *schema.Schema
	named map[namedKey]*cnode
}

type namedKey struct {
	name string
	rel  schema.ElementRelationship // "" when the reference does not override it
}

func (t *Type) compiledRoot() *cnode {
	t.compiled.once.Do(func() {
		c := &compiler{s: t.schema, named: map[namedKey]*cnode{}}
		root := c.ref(t.ref)
		// The root and its metadata are told the fields stripSet names; a
		// copy, since their types may be shared.
		if root.hasMap {
			r := *root
			r.fields = maps.Clone(root.fields)
			r.strip([]string{"apiVersion", "kind"})
			if f, ok := r.fields["metadata"]; ok && f.n.hasMap {
				meta := *f.n
				meta.fields = maps.Clone(meta.fields)
				meta.strip(strippedMeta)
				r.fields["metadata"] = cfield{n: &meta, key: f.key}
			}
			root = &r
		}
		t.compiled.root = root
		t.compiled.zeroKnown = zeroKnown(root, t.zero)
	})
	return t.compiled.root
}

// strip marks keys as no one's in n (a copy whose fields are its own).
func (n *cnode) strip(keys []string) {
	n.stripped = make(map[string]bool, len(keys))
	for _, k := range keys {
		n.stripped[k] = true
		if f, ok := n.fields[k]; ok {
			f.stripped = true
			n.fields[k] = f
		}
	}
}

// zeroKnown reports whether every key of zero (a map of the zero object
// where the schema has type n), and of the maps in it, has a type.
func zeroKnown(n *cnode, zero map[string]any) bool {
	for k, v := range zero {
		cn, _, _ := n.field(k)
		if cn == nil {
			return false
		}
		if m, ok := v.(map[string]any); ok && !zeroKnown(cn, m) {
			return false
		}
	}
	return true
}

func (c *compiler) ref(tr schema.TypeRef) *cnode {
	n := &cnode{}
	if tr.NamedType != nil {
		k := namedKey{name: *tr.NamedType}
		if tr.ElementRelationship != nil {
			k.rel = *tr.ElementRelationship
		}
		if known, ok := c.named[k]; ok {
			return known
		}
		c.named[k] = n // before compiling it: types may refer to themselves
	}
	if a, ok := c.s.Resolve(tr); ok {
		c.atom(n, a)
	} else {
		n.invalid = true
	}
	return n
}

func (c *compiler) atom(n *cnode, a schema.Atom) {
	if a.Map == nil && a.Scalar == nil && a.List == nil {
		n.invalid = true
		return
	}
	n.hasScalar = a.Scalar != nil
	if m := a.Map; m != nil {
		n.hasMap = true
		n.mapAtomic = m.ElementRelationship == schema.Atomic
		if len(m.Fields) > 0 {
			n.fields = make(map[string]cfield, len(m.Fields))
			for _, f := range m.Fields {
				if _, dup := n.fields[f.Name]; !dup { // FindField finds the first
					n.fields[f.Name] = cfield{n: c.ref(f.Type), key: "f:" + f.Name}
				}
			}
		}
		if m.ElementType != (schema.TypeRef{}) {
			n.elem = c.ref(m.ElementType)
		}
	}
	if l := a.List; l != nil {
		n.hasList = true
		n.listAssoc = l.ElementRelationship == schema.Associative
		n.item = c.ref(l.ElementType)
		n.keys = l.Keys
		if len(l.Keys) > 0 {
			n.keyDefs = make([]any, len(l.Keys))
			if ia, ok := c.s.Resolve(l.ElementType); ok && ia.Map != nil {
				for i, k := range l.Keys {
					if f, ok := ia.Map.FindField(k); ok {
						n.keyDefs[i] = f.Default
					}
				}
			}
		}
	}
}

// kind of a JSON value as the comparison deduces atoms.
type vkind uint8

const (
	kNull vkind = iota
	kScalar
	kList
	kMap
	kOther // not a JSON value of the decoder: give up
)

func kindOf(v any) vkind {
	switch v.(type) {
	case nil:
		return kNull
	case string, bool, int64, float64:
		return kScalar
	case []any:
		return kList
	case map[string]any:
		return kMap
	}
	return kOther
}

// deduced is the atom the comparison handles a value of kind k with: the
// part of n's atom for k when n has one, else all of n (deduceAtom). It is
// given as the kinds it holds.
type atomKinds uint8

const (
	aMap atomKinds = 1 << iota
	aScalar
	aList
)

func (n *cnode) all() atomKinds {
	var a atomKinds
	if n.hasMap {
		a |= aMap
	}
	if n.hasScalar {
		a |= aScalar
	}
	if n.hasList {
		a |= aList
	}
	return a
}

func (n *cnode) deduce(k vkind) atomKinds {
	switch {
	case k == kScalar && n.hasScalar:
		return aScalar
	case k == kList && n.hasList:
		return aList
	case k == kMap && n.hasMap:
		return aMap
	}
	return n.all()
}

// handled is the part of atom a handleAtom runs: map first, then scalar,
// then list.
func handled(a atomKinds) atomKinds {
	switch {
	case a&aMap != 0:
		return aMap
	case a&aScalar != 0:
		return aScalar
	}
	return aList
}

// fnode is a node of a FieldsV1 set as the walk builds it: owned says the
// path itself is owned (written "." beside what is owned below it, or as {}
// when nothing is), kids what is owned below it. The zero fnode is nothing
// owned. Nodes are values, their kids in their walk's arena.
type fnode struct {
	owned bool
	kids  []fkid
}

// fkid is a child of an fnode under its FieldsV1 key: "f:"+key when field
// (a map's key, kept without the prefix so that the walk builds no strings
// for them; full is the whole key when the schema has it), else key
// ("k:{...}", "v:...").
type fkid struct {
	key, full string
	field     bool
	n         fnode
}

// fullKey is k's FieldsV1 key.
func (k fkid) fullKey() string {
	switch {
	case k.full != "":
		return k.full
	case k.field:
		return "f:" + k.key
	}
	return k.key
}

// walk is the memory of one walk of a create: the kids of the nodes it
// built, in arena, and the kids of the nodes it is building, on stack (a
// node's are the top of the stack, above its mark, until they are moved to
// the arena in one piece). Walks are reused (getWalk, putWalk): a create
// allocates no lists of kids.
type walk struct {
	stack, arena []fkid
	// zeroKnown: the compared empty object's keys all have a type
	// (compiled.zeroKnown).
	zeroKnown bool
}

var walks = sync.Pool{New: func() any { return new(walk) }}

func getWalk() *walk { return walks.Get().(*walk) }

// putWalk returns w for reuse once nothing built in it is used.
func putWalk(w *walk) {
	if cap(w.arena) > 1024 || cap(w.stack) > 1024 {
		return // a rare large object: not kept
	}
	// Only what this walk used is cleared (the capacity left by a larger
	// object before stays): every kid it pushed was moved to the arena but
	// those still on the stack (a walk that gave up).
	n := len(w.arena)
	clear(w.arena[:n])
	clear(w.stack[:min(n+len(w.stack), cap(w.stack))])
	w.arena, w.stack = w.arena[:0], w.stack[:0]
	walks.Put(w)
}

// node is a node (owned or not) with the kids above mark on the stack,
// moved to the arena.
func (w *walk) node(owned bool, mark int) fnode {
	kids := w.stack[mark:]
	if len(kids) == 0 {
		return fnode{owned: owned}
	}
	start := len(w.arena)
	// When the arena grows, nodes already built keep the old array.
	w.arena = append(w.arena, kids...)
	w.stack = w.stack[:mark]
	return fnode{owned: owned, kids: w.arena[start:len(w.arena):len(w.arena)]}
}

// leafNode is a path owned with nothing below it.
var leafNode = fnode{owned: true}

func (n fnode) empty() bool { return !n.owned && len(n.kids) == 0 }

// kid is the index among n's kids of the one with key (a field's when
// field), or -1.
func (n fnode) kid(key string, field bool) int {
	for i := range n.kids {
		if n.kids[i].key == key && n.kids[i].field == field {
			return i
		}
	}
	return -1
}

// toMap is n as decoded FieldsV1 JSON (nil when n is empty).
func (n fnode) toMap() map[string]any {
	if n.empty() {
		return nil
	}
	out := make(map[string]any, len(n.kids)+1)
	if n.owned && len(n.kids) > 0 {
		out["."] = map[string]any{}
	}
	for _, k := range n.kids {
		out[k.fullKey()] = k.n.toMap()
	}
	return out
}

// appendJSON appends n as AppendJSON writes toMap's result (keys in its
// order, api.SortObjectKeys); n's kids are sorted on the way.
func (n fnode) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if n.owned && len(n.kids) > 0 {
		b = append(b, `".":{},`...)
	}
	sortKids(n.kids)
	for i, k := range n.kids {
		if i > 0 {
			b = append(b, ',')
		}
		if k.field {
			// "f:" and then key as JSON quotes it: quoting is rune by
			// rune, so the prefix changes nothing of the rest.
			b = append(b, `"f:`...)
			at := len(b)
			b = api.AppendJSONString(b, k.key)
			b = append(b[:at], b[at+1:]...) // key's opening quote
		} else {
			b = api.AppendJSONString(b, k.key)
		}
		b = append(b, ':')
		b = k.n.appendJSON(b)
	}
	return append(b, '}')
}

// sortKids sorts kids in the order AppendJSON writes their keys
// (api.SortObjectKeys).
func sortKids(kids []fkid) {
	fields := 0
	for _, k := range kids {
		if k.field {
			fields++
		}
	}
	switch fields {
	case len(kids):
		// "f:"+key orders as key, and a level of fields only is ordered
		// as text.
		slices.SortFunc(kids, func(a, b fkid) int { return strings.Compare(a.key, b.key) })
	case 0:
		api.SortObjectKeys(kids, func(k fkid) string { return k.key })
	default:
		api.SortObjectKeys(kids, fkid.fullKey)
	}
}

// added returns the FieldsV1 node of v added where the empty object has
// nothing: the path is owned, and what v holds when n merges it granularly.
func (w *walk) added(n *cnode, v any) (fnode, bool) {
	if n.invalid {
		return fnode{}, false
	}
	k := kindOf(v)
	if k == kOther {
		return fnode{}, false
	}
	switch handled(n.deduce(k)) {
	case aMap:
		m, _ := v.(map[string]any) // anything else is no map: a leaf
		if n.mapAtomic || len(m) == 0 {
			return leafNode, true
		}
		mark := len(w.stack)
		for key, cv := range m {
			cn, full, _ := n.field(key)
			if cn == nil {
				return fnode{}, false
			}
			c, ok := w.added(cn, cv)
			if !ok {
				return fnode{}, false
			}
			w.stack = append(w.stack, fkid{key: key, full: full, field: true, n: c})
		}
		return w.node(true, mark), true
	case aList:
		l, _ := v.([]any)
		if !n.listAssoc || len(l) == 0 {
			return leafNode, true
		}
		return w.addedItems(n, l, true)
	}
	return leafNode, true
}

// addedItems is the node (owned or not) of the items of l, added to a list
// of the associative type n; false when the walk gives up.
func (w *walk) addedItems(n *cnode, l []any, owned bool) (fnode, bool) {
	var seen map[string]bool // for long lists; short ones are searched
	if len(l) > 16 {
		seen = make(map[string]bool, len(l))
	}
	mark := len(w.stack)
	for _, item := range l {
		key, ok := n.itemKey(item)
		if !ok {
			return fnode{}, false
		}
		if seen != nil {
			if seen[key] {
				return fnode{}, false
			}
			seen[key] = true
		} else if (fnode{kids: w.stack[mark:]}).kid(key, false) >= 0 {
			return fnode{}, false
		}
		c, ok := w.added(n.item, item)
		if !ok {
			return fnode{}, false
		}
		w.stack = append(w.stack, fkid{key: key, n: c})
	}
	return w.node(owned, mark), true
}

// field is the type of key in a map of type n (nil when it has none), its
// FieldsV1 key when the schema names the field ("" for other keys), and
// whether no one owns it (stripSet).
func (n *cnode) field(key string) (*cnode, string, bool) {
	if f, ok := n.fields[key]; ok {
		return f.n, f.key, f.stripped
	}
	return n.elem, "", n.stripped != nil && n.stripped[key]
}

// itemKey is the serialized path element of a list item ("k:{...}" or
// "v:..."), as the comparison derives it; ok is false where it reports an
// error, and for values whose equality it might judge apart from their
// serialization (floats).
func (n *cnode) itemKey(item any) (string, bool) {
	if len(n.keys) == 0 {
		if kindOf(item) != kScalar {
			return "", false
		}
		if _, f := item.(float64); f {
			return "", false
		}
		if b, ok := appendPlain(append(make([]byte, 0, 32), "v:"...), item); ok {
			return string(b), true
		}
		v := value.NewValueInterface(item)
		return serialize(fieldpath.PathElement{Value: &v})
	}
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	type kv struct {
		name string
		v    any
	}
	var buf [4]kv
	kvs := buf[:0]
	for i, k := range n.keys {
		v, ok := m[k]
		if !ok {
			v = n.keyDefs[i]
			if v == nil {
				continue
			}
		}
		if k := kindOf(v); k != kScalar && k != kNull {
			return "", false
		}
		if _, f := v.(float64); f {
			return "", false
		}
		kvs = append(kvs, kv{k, v})
	}
	if len(kvs) == 0 {
		return "", false
	}
	// Sorted by name, stably (FieldList.Sort).
	for i := 1; i < len(kvs); i++ {
		for j := i; j > 0 && kvs[j].name < kvs[j-1].name; j-- {
			kvs[j], kvs[j-1] = kvs[j-1], kvs[j]
		}
	}
	// The common keys (names, numbers) written directly; anything a JSON
	// encoder might escape goes through the library's serializer.
	b := append(make([]byte, 0, 48), `k:{`...)
	plain := true
	for i, f := range kvs {
		if i > 0 {
			b = append(b, ',')
		}
		if b, plain = appendPlain(b, f.name); !plain {
			break
		}
		b = append(b, ':')
		if b, plain = appendPlain(b, f.v); !plain {
			break
		}
	}
	if plain {
		return string(append(b, '}')), true
	}
	fl := make(value.FieldList, len(kvs))
	for i, f := range kvs {
		fl[i] = value.Field{Name: f.name, Value: value.NewValueInterface(f.v)}
	}
	return serialize(fieldpath.PathElement{Key: &fl})
}

func serialize(pe fieldpath.PathElement) (string, bool) {
	s, err := fieldpath.SerializePathElement(pe)
	return s, err == nil
}

// appendPlain appends the JSON of v when it is null, a bool, an int64 or a
// string of printable ASCII that no JSON encoder escapes; ok is false (and b
// unusable) otherwise.
func appendPlain(b []byte, v any) ([]byte, bool) {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, t), true
	case int64:
		return strconv.AppendInt(b, t, 10), true
	case string:
		for i := range len(t) {
			switch c := t[i]; {
			case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
				return b, false
			}
		}
		b = append(b, '"')
		b = append(b, t...)
		return append(b, '"'), true
	}
	return b, false
}

// changed returns the FieldsV1 node of what differs from lhs (the empty
// object's value, present) to rhs; empty when nothing does.
func (w *walk) changed(n *cnode, lhs, rhs any) (fnode, bool) {
	if n.invalid {
		return fnode{}, false
	}
	lk, rk := kindOf(lhs), kindOf(rhs)
	if lk == kOther || rk == kOther {
		return fnode{}, false
	}
	// Values the type deduces apart (a null and a string of an untyped
	// field) are compared as each: what either finds is owned.
	al, ar := handled(n.deduce(lk)), handled(n.deduce(rk))
	c, ok := w.changedAs(ar, n, lhs, rhs)
	if !ok || al == ar {
		return c, ok
	}
	d, ok := w.changedAs(al, n, lhs, rhs)
	if !ok {
		return fnode{}, false
	}
	return union(c, d), true
}

// changedAs is changed with the values handled as atom kind a.
func (w *walk) changedAs(a atomKinds, n *cnode, lhs, rhs any) (fnode, bool) {
	switch a {
	case aMap:
		lm, _ := lhs.(map[string]any)
		rm, _ := rhs.(map[string]any)
		if n.mapAtomic || (len(lm) == 0 && len(rm) == 0) {
			return leafChange(lhs, rhs), true
		}
		return w.changedMap(n, lm, rm, nil)
	case aList:
		ll, _ := lhs.([]any)
		rl, _ := rhs.([]any)
		if !n.listAssoc || (len(ll) == 0 && len(rl) == 0) {
			return leafChange(lhs, rhs), true
		}
		if len(ll) > 0 {
			return fnode{}, false // the empty object's lists are empty
		}
		return w.addedItems(n, rl, false)
	}
	return leafChange(lhs, rhs), true
}

// changedMap is changed for two maps of the granular map type n, at least
// one not empty. Keys in ignored are compared all the same (what does not
// fit fails the comparison), then not owned.
func (w *walk) changedMap(n *cnode, lm, rm map[string]any, ignored map[string]bool) (fnode, bool) {
	mark := len(w.stack)
	for key, rv := range rm {
		cn, full, stripped := n.field(key)
		if cn == nil || cn.invalid {
			return fnode{}, false
		}
		if stripped && isScalar(rv) && (lm[key] == nil || isScalar(lm[key])) {
			// A scalar is owned as a whole (or not at all), and no one
			// owns this field: nothing to compute.
			continue
		}
		var (
			c  fnode
			ok bool
		)
		if lv, in := lm[key]; in {
			c, ok = w.changed(cn, lv, rv)
		} else {
			c, ok = w.added(cn, rv)
		}
		if !ok {
			return fnode{}, false
		}
		if !c.empty() && !ignored[key] {
			w.stack = append(w.stack, fkid{key: key, full: full, field: true, n: c})
		}
	}
	if w.zeroKnown {
		return w.node(false, mark), true // lm's keys all have a type
	}
	for key := range lm {
		if _, in := rm[key]; in {
			continue
		}
		if cn, _, _ := n.field(key); cn == nil {
			return fnode{}, false
		}
	}
	return w.node(false, mark), true
}

// union is the union of two FieldsV1 nodes.
func union(a, b fnode) fnode {
	switch {
	case a.empty():
		return b
	case b.empty():
		return a
	}
	out := fnode{owned: a.owned || b.owned, kids: make([]fkid, len(a.kids), len(a.kids)+len(b.kids))}
	copy(out.kids, a.kids)
	for _, k := range b.kids {
		if i := out.kid(k.key, k.field); i >= 0 {
			out.kids[i].n = union(out.kids[i].n, k.n)
		} else {
			out.kids = append(out.kids, k)
		}
	}
	return out
}

func isScalar(v any) bool { return kindOf(v) == kScalar }

// leafChange is the node of a leaf in both objects: owned when it differs.
func leafChange(lhs, rhs any) fnode {
	if value.Equals(value.NewValueInterface(rhs), value.NewValueInterface(lhs)) {
		return fnode{}
	}
	return leafNode
}

// stripped are the fields of stripSet: the top-level members, and
// metadata's.
var (
	strippedTop  = []string{"apiVersion", "kind", "metadata"}
	strippedMeta = []string{"name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName",
		"generation", "managedFields", "resourceVersion"}
)

// unown removes the membership of field key in node (the path itself, not
// what is below it), and key when nothing is left.
func unown(node *fnode, key string) {
	i := node.kid(key, true)
	if i < 0 {
		return
	}
	node.kids[i].n.owned = false
	if len(node.kids[i].n.kids) == 0 {
		node.kids = append(node.kids[:i], node.kids[i+1:]...)
	}
}

// createFields is the FieldsV1 set an Update owns when it creates obj (no
// managedFields in it): empty when it owns nothing; ok false when the walk
// gives up (see above).
func (m *Manager) createFields(w *walk, obj map[string]any) (fnode, bool) {
	if m.only != nil {
		return fnode{}, false
	}
	root := m.typ.compiledRoot()
	if root.invalid || !root.hasMap || root.mapAtomic {
		return fnode{}, false
	}
	w.zeroKnown = m.typ.compiled.zeroKnown
	out, ok := w.changedMap(root, m.typ.zero, obj, m.ignored)
	if !ok {
		return fnode{}, false
	}
	if i := out.kid("metadata", true); i >= 0 {
		for _, k := range strippedMeta {
			unown(&out.kids[i].n, k)
		}
	}
	for _, k := range strippedTop {
		unown(&out, k)
	}
	return out, true
}
