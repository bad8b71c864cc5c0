package flowcontrol

import (
	"math/bits"
	"strings"

	"github.com/converge-dev/converge/framework/apiserver/filters"
)

// indexWords bounds the indexed schemas (64 per word); a configuration with
// more schemas is matched by a plain scan.
const indexWords = 4

// schemaSet is a set of schema positions in matching order.
type schemaSet [indexWords]uint64

func (s *schemaSet) add(i int) { s[i/64] |= 1 << (i % 64) }
func (s *schemaSet) union(o *schemaSet) {
	s[0], s[1], s[2], s[3] = s[0]|o[0], s[1]|o[1], s[2]|o[2], s[3]|o[3]
}
func (s *schemaSet) empty() bool       { return s[0]|s[1]|s[2]|s[3] == 0 }
func (s *schemaSet) next(from int) int { return nextBit(s, from) }
func nextBit(s *schemaSet, from int) int {
	for w := from / 64; w < indexWords; w++ {
		word := s[w]
		if w == from/64 {
			word &^= (1 << (from % 64)) - 1
		}
		if word != 0 {
			return w*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// subjectIndex finds the schemas that can match a request's subject with a
// few map lookups (its user, its groups, its ServiceAccount namespace), so
// that classification checks the rules of those schemas only.
type subjectIndex struct {
	always      schemaSet // wildcard subjects
	byUser      map[string]*schemaSet
	byGroup     map[string]*schemaSet
	byNamespace map[string]*schemaSet // every ServiceAccount of a namespace
}

// newSubjectIndex indexes schemas; nil when there are too many.
func newSubjectIndex(schemas []compiledSchema) *subjectIndex {
	if len(schemas) > indexWords*64 {
		return nil
	}
	x := &subjectIndex{byUser: map[string]*schemaSet{}, byGroup: map[string]*schemaSet{}, byNamespace: map[string]*schemaSet{}}
	put := func(m map[string]*schemaSet, key string, i int) {
		s := m[key]
		if s == nil {
			s = &schemaSet{}
			m[key] = s
		}
		s.add(i)
	}
	for i := range schemas {
		for _, r := range schemas[i].rules {
			for _, u := range r.users {
				if u == Wildcard {
					x.always.add(i)
				} else {
					put(x.byUser, u, i)
				}
			}
			for _, g := range r.groups {
				if g == Wildcard {
					x.always.add(i)
				} else {
					put(x.byGroup, g, i)
				}
			}
			for _, u := range r.saUsers {
				put(x.byUser, u, i)
			}
			for _, p := range r.saPrefixes {
				ns := strings.TrimSuffix(strings.TrimPrefix(p, filters.ServiceAccountUsernamePrefix), ":")
				put(x.byNamespace, ns, i)
			}
		}
	}
	return x
}

// candidates is the set of schemas one of whose subjects is q's.
func (x *subjectIndex) candidates(q *request) schemaSet {
	set := x.always
	if s := x.byUser[q.user]; s != nil {
		set.union(s)
	}
	for _, g := range q.groups {
		if s := x.byGroup[g]; s != nil {
			set.union(s)
		}
	}
	if len(x.byNamespace) > 0 {
		if ns, _, ok := filters.ServiceAccountOf(q.user); ok {
			if s := x.byNamespace[ns]; s != nil {
				set.union(s)
			}
		}
	}
	return set
}
