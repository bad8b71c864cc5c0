package fieldmanager

import (
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api"
)

// The walk of creates above builds its set as nodes, then sorts and encodes
// them. emitter is the same walk writing the FieldsV1 bytes as it goes, for
// the API server's creates (UpdateEncoded without decoded entries): each
// map's keys are sorted before it is walked, each node is written where it
// stands and cut back when it turns out empty, and the fields no one owns
// are left unowned on the way (strippedTop, strippedMeta) instead of after.
// It keeps no nodes, so it writes no pointers to the heap (the nodes' keys
// were most of a create's bookkeeping under a running GC).
//
// It follows the node walk's rules exactly and gives up wherever that walk
// gives up, and also where values the type deduces apart are compared as
// each (changed): the caller then runs the node walk, which falls back to
// the library in turn. TestCreateFieldsMatchLibrary and FuzzCreateFields
// hold the three to the same bytes.
type emitter struct {
	b         []byte
	zeroKnown bool
}

// Levels of the maps whose fields' membership is dropped (stripSet).
const (
	levelOther = iota
	levelRoot
	levelMeta
)

// kidStrip reports whether the membership of the field key of a map at
// level is dropped, and the level of the map under it.
func kidStrip(level int, key string) (bool, int) {
	switch level {
	case levelRoot:
		if key == "metadata" {
			return true, levelMeta
		}
		return key == "apiVersion" || key == "kind", levelOther
	case levelMeta:
		return slices.Contains(strippedMeta, key), levelOther
	}
	return false, levelOther
}

// open starts a node whose path is owned when owned; it returns where the
// node starts, for close.
func (e *emitter) open(owned bool) int {
	start := len(e.b)
	if owned {
		e.b = append(e.b, `{".":{}`...)
	} else {
		e.b = append(e.b, '{')
	}
	return start
}

// close ends the node open started; false when it is empty (nothing owned
// at or below it), and then nothing of it is left.
func (e *emitter) close(start int, owned bool) bool {
	head := 1
	if owned {
		head = len(`{".":{}`)
	}
	if len(e.b) == start+head { // no kids
		e.b = e.b[:start]
		if owned {
			e.b = append(e.b, "{}"...)
		}
		return owned
	}
	e.b = append(e.b, '}')
	return true
}

// sep writes the comma before a kid of the node being written, unless it is
// the first one; it returns where the kid starts, to cut it when it is empty.
func (e *emitter) sep() int {
	mark := len(e.b)
	if e.b[len(e.b)-1] != '{' {
		e.b = append(e.b, ',')
	}
	return mark
}

// fieldKey writes "f:<key>": as JSON quotes key, prefixed (quoting is rune
// by rune, so the prefix changes nothing of the rest).
func (e *emitter) fieldKey(key string) {
	e.b = append(e.b, `"f:`...)
	at := len(e.b)
	e.b = api.AppendJSONString(e.b, key)
	e.b = append(e.b[:at], e.b[at+1:]...)
	e.b = append(e.b, ':')
}

// leaf writes a path owned with nothing below it, unless its membership is
// dropped; it reports whether anything was written.
func (e *emitter) leaf(owned bool) bool {
	if owned {
		e.b = append(e.b, "{}"...)
	}
	return owned
}

// entry is a map entry with the type of its key, for walking a map in key
// order.
type entry struct {
	k string
	v any
	n *cnode
}

func sortEntries(es []entry) {
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.k, b.k) })
}

// added is walk.added writing the node: strip drops the path's own
// membership, level is that of the map v is when it is one.
func (e *emitter) added(n *cnode, v any, strip bool, level int) (nonEmpty, ok bool) {
	if n.invalid {
		return false, false
	}
	k := kindOf(v)
	if k == kOther {
		return false, false
	}
	owned := !strip
	switch handled(n.deduce(k)) {
	case aMap:
		m, _ := v.(map[string]any)
		if n.mapAtomic || len(m) == 0 {
			return e.leaf(owned), true
		}
		var small [8]entry
		es := small[:0]
		for k, v := range m {
			cn, _, _ := n.field(k)
			if cn == nil {
				return false, false
			}
			es = append(es, entry{k, v, cn})
		}
		sortEntries(es)
		start := e.open(owned)
		for _, f := range es {
			mark := e.sep()
			e.fieldKey(f.k)
			s, l := kidStrip(level, f.k)
			ne, ok := e.added(f.n, f.v, s, l)
			if !ok {
				return false, false
			}
			if !ne {
				e.b = e.b[:mark]
			}
		}
		return e.close(start, owned), true
	case aList:
		l, _ := v.([]any)
		if !n.listAssoc || len(l) == 0 {
			return e.leaf(owned), true
		}
		return e.addedItems(n, l, owned)
	}
	return e.leaf(owned), true
}

// item is a list item by its path element, for walking a list in the order
// its FieldsV1 keys are written.
type item struct {
	key string
	at  int
}

// addedItems is walk.addedItems writing the node.
func (e *emitter) addedItems(n *cnode, l []any, owned bool) (nonEmpty, ok bool) {
	var small [8]item
	items := small[:0]
	var seen map[string]bool // for long lists; short ones are searched
	if len(l) > 16 {
		seen = make(map[string]bool, len(l))
	}
	for i, it := range l {
		key, ok := n.itemKey(it)
		if !ok {
			return false, false
		}
		if seen != nil {
			if seen[key] {
				return false, false
			}
			seen[key] = true
		} else if slices.ContainsFunc(items, func(x item) bool { return x.key == key }) {
			return false, false
		}
		items = append(items, item{key, i})
	}
	api.SortObjectKeys(items, func(x item) string { return x.key })
	start := e.open(owned)
	for _, it := range items {
		e.sep()
		e.b = api.AppendJSONString(e.b, it.key)
		e.b = append(e.b, ':')
		// An added item is owned: never empty.
		if _, ok := e.added(n.item, l[it.at], false, levelOther); !ok {
			return false, false
		}
	}
	return e.close(start, owned), true
}

// changed is walk.changed writing the node; it gives up where the walk
// would compare the values as two kinds (a union of nodes).
func (e *emitter) changed(n *cnode, lhs, rhs any, strip bool, level int) (nonEmpty, ok bool) {
	if n.invalid {
		return false, false
	}
	lk, rk := kindOf(lhs), kindOf(rhs)
	if lk == kOther || rk == kOther {
		return false, false
	}
	al, ar := handled(n.deduce(lk)), handled(n.deduce(rk))
	if al != ar {
		return false, false
	}
	switch ar {
	case aMap:
		lm, _ := lhs.(map[string]any)
		rm, _ := rhs.(map[string]any)
		if n.mapAtomic || (len(lm) == 0 && len(rm) == 0) {
			return e.leafChange(lhs, rhs, strip), true
		}
		return e.changedMap(n, lm, rm, nil, level)
	case aList:
		ll, _ := lhs.([]any)
		rl, _ := rhs.([]any)
		if !n.listAssoc || (len(ll) == 0 && len(rl) == 0) {
			return e.leafChange(lhs, rhs, strip), true
		}
		if len(ll) > 0 {
			return false, false // the empty object's lists are empty
		}
		return e.addedItems(n, rl, false)
	}
	return e.leafChange(lhs, rhs, strip), true
}

// leafChange writes the node of a leaf in both objects: owned when it
// differs, unless its membership is dropped.
func (e *emitter) leafChange(lhs, rhs any, strip bool) bool {
	if leafChange(lhs, rhs).empty() {
		return false
	}
	return e.leaf(!strip)
}

// changedMap is walk.changedMap writing the node (never owned itself); the
// fields of the map at level whose membership is dropped are left unowned.
func (e *emitter) changedMap(n *cnode, lm, rm map[string]any, ignored map[string]bool, level int) (nonEmpty, ok bool) {
	// The fields no one owns that the walk skips are left out before
	// sorting.
	var small [8]entry
	es := small[:0]
	for key, rv := range rm {
		cn, _, stripped := n.field(key)
		if cn == nil || cn.invalid {
			return false, false
		}
		if stripped && isScalar(rv) && (lm[key] == nil || isScalar(lm[key])) {
			continue
		}
		es = append(es, entry{key, rv, cn})
	}
	sortEntries(es)
	start := e.open(false)
	for _, f := range es {
		key, rv, cn := f.k, f.v, f.n
		mark := e.sep()
		e.fieldKey(key)
		s, l := kidStrip(level, key)
		var ne bool
		if lv, in := lm[key]; in {
			ne, ok = e.changed(cn, lv, rv, s, l)
		} else {
			ne, ok = e.added(cn, rv, s, l)
		}
		if !ok {
			return false, false
		}
		if !ne || ignored[key] {
			e.b = e.b[:mark]
		}
	}
	if !e.zeroKnown {
		for key := range lm {
			if _, in := rm[key]; in {
				continue
			}
			if cn, _, _ := n.field(key); cn == nil {
				return false, false
			}
		}
	}
	return e.close(start, false), true
}

// appendCreateFields appends to b the FieldsV1 set an Update owns when it
// creates obj (no managedFields in it), as createFields' node encodes;
// nonEmpty is false when it owns nothing (b is then as it was), ok false
// when the emitter gives up (b is then to be dropped).
func (m *Manager) appendCreateFields(b []byte, obj map[string]any) (_ []byte, nonEmpty, ok bool) {
	if m.only != nil {
		return b, false, false
	}
	root := m.typ.compiledRoot()
	if root.invalid || !root.hasMap || root.mapAtomic {
		return b, false, false
	}
	e := emitter{b: b, zeroKnown: m.typ.compiled.zeroKnown}
	nonEmpty, ok = e.changedMap(root, m.typ.zero, obj, m.ignored, levelRoot)
	return e.b, nonEmpty, ok
}
