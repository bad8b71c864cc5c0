package patchcompat

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// gen builds random JSON documents and patches aimed at the places where
// implementations disagree: missing members, nulls, array indexes at and past
// the ends, negative indexes, escaped pointer tokens and numbers written in
// several ways.
type gen struct{ r *rand.Rand }

func newGen(seed, stream uint64) *gen { return &gen{r: rand.New(rand.NewPCG(seed, stream))} }

var (
	genKeys    = []string{"a", "b", "c", "d", "x/y", "m~n", "", "0", "1", "-"}
	genNumbers = []string{"0", "1", "-1", "2", "1.0", "1.5e3", "12345678901234567890", "-0", "0.1"}
	genStrings = []string{"", "x", "y", "a<b&c", "é", "1", "null"}
)

func (g *gen) pick(n int) int        { return g.r.IntN(n) }
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) scalar() any {
	switch g.pick(5) {
	case 0:
		return nil
	case 1:
		return g.chance(0.5)
	case 2, 3:
		return json.Number(genNumbers[g.pick(len(genNumbers))])
	default:
		return genStrings[g.pick(len(genStrings))]
	}
}

// value returns a random JSON value nested at most depth levels.
func (g *gen) value(depth int) any {
	if depth <= 0 || g.chance(0.4) {
		return g.scalar()
	}
	if g.chance(0.5) {
		m := map[string]any{}
		for range g.pick(4) {
			m[genKeys[g.pick(len(genKeys))]] = g.value(depth - 1)
		}
		return m
	}
	a := make([]any, g.pick(4))
	for i := range a {
		a[i] = g.value(depth - 1)
	}
	return a
}

// doc returns a document: mostly an object, sometimes an array.
func (g *gen) doc() any {
	if g.chance(0.1) {
		a := make([]any, 1+g.pick(3))
		for i := range a {
			a[i] = g.value(3)
		}
		return a
	}
	m := map[string]any{}
	for range 1 + g.pick(5) {
		m[genKeys[g.pick(len(genKeys))]] = g.value(3)
	}
	return m
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// path walks doc at random and returns a pointer near an existing value, the
// value there (when the walk ended on one) and whether it exists.
func (g *gen) path(doc any) (string, any, bool) {
	switch g.pick(60) {
	case 0:
		return "", doc, true
	case 1:
		return "q/" + genKeys[g.pick(len(genKeys))], nil, false
	case 2:
		return genKeys[g.pick(len(genKeys))], nil, false
	}
	var b strings.Builder
	cur := doc
	for {
		var toks []string
		var vals []any
		switch c := cur.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(c)) {
				toks = append(toks, escapeToken(k))
				vals = append(vals, c[k])
			}
		case []any:
			for i, v := range c {
				toks = append(toks, strconv.Itoa(i))
				vals = append(vals, v)
			}
		}
		var inner []int
		for i, v := range vals {
			switch v.(type) {
			case map[string]any, []any:
				inner = append(inner, i)
			}
		}
		if len(inner) > 0 && g.chance(0.5) || len(toks) > 0 && g.chance(0.05) {
			i := g.pick(len(toks))
			if len(inner) > 0 {
				i = inner[g.pick(len(inner))]
			}
			b.WriteString("/" + toks[i])
			cur = vals[i]
			continue
		}
		// The last token: existing, new, or an index variant.
		if len(toks) > 0 && g.chance(0.8) {
			i := g.pick(len(toks))
			return b.String() + "/" + toks[i], vals[i], true
		}
		if a, ok := cur.([]any); ok {
			n := len(a)
			variants := []string{strconv.Itoa(n), strconv.Itoa(n + 1), "-1", strconv.Itoa(-n), strconv.Itoa(-n - 1), "-", "00", "+0", "x", "", "01"}
			return b.String() + "/" + variants[g.pick(len(variants))], nil, false
		}
		tok := []string{"new", "z", "m~2", "~", "a~1b"}[g.pick(5)]
		return b.String() + "/" + tok, nil, false
	}
}

var genOps = []string{"add", "add", "remove", "replace", "replace", "move", "copy", "test", "test"}

// jsonPatch returns a random JSON patch for doc, as JSON text.
func (g *gen) jsonPatch(doc any) []byte {
	if g.chance(0.01) {
		return []byte([]string{`null`, `{}`, `[1]`, `[null]`, `[]`, `"x"`}[g.pick(6)])
	}
	ops := make([]any, 1+g.pick(3))
	for i := range ops {
		op := map[string]any{}
		kind := genOps[g.pick(len(genOps))]
		switch g.pick(200) {
		case 0:
			op["op"] = "frobnicate"
		case 1:
			op["op"] = json.Number("1")
		case 2:
		default:
			op["op"] = kind
		}
		path, at, exists := g.path(doc)
		switch g.pick(100) {
		case 0:
		case 1:
			op["path"] = json.Number("1")
		default:
			op["path"] = path
		}
		if kind == "move" || kind == "copy" || g.chance(0.05) {
			from, _, _ := g.path(doc)
			if !g.chance(0.03) {
				op["from"] = from
			}
		}
		switch {
		case g.chance(0.08):
			// no value
		case g.chance(0.08):
			op["value"] = nil
		case kind == "test" && exists && g.chance(0.6):
			op["value"] = at
		default:
			op["value"] = g.value(2)
		}
		ops[i] = op
	}
	b, err := json.Marshal(ops)
	if err != nil {
		panic(err)
	}
	return b
}

// mergePatch returns a random merge patch for doc.
func (g *gen) mergePatch(doc any) any {
	m, ok := doc.(map[string]any)
	if !ok || g.chance(0.1) {
		switch g.pick(6) {
		case 0:
			return g.scalar()
		case 1, 2:
			a := make([]any, g.pick(3))
			for i := range a {
				a[i] = g.value(3)
			}
			return a
		}
		return g.objectWithNulls(3)
	}
	p := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if !g.chance(0.5) {
			continue
		}
		switch g.pick(4) {
		case 0:
			p[k] = nil
		case 1:
			if _, isObj := v.(map[string]any); isObj {
				p[k] = g.mergePatch(v)
				continue
			}
			fallthrough
		default:
			p[k] = g.valueWithNulls(3)
		}
	}
	for range g.pick(3) {
		p[genKeys[g.pick(len(genKeys))]] = g.valueWithNulls(3)
	}
	return p
}

// valueWithNulls is value, with objects that often hold null members.
func (g *gen) valueWithNulls(depth int) any {
	if depth > 0 && g.chance(0.3) {
		return g.objectWithNulls(depth)
	}
	if depth > 0 && g.chance(0.2) {
		a := make([]any, 1+g.pick(3))
		for i := range a {
			a[i] = g.valueWithNulls(depth - 1)
		}
		return a
	}
	return g.value(depth)
}

func (g *gen) objectWithNulls(depth int) map[string]any {
	m := map[string]any{}
	for range 1 + g.pick(3) {
		k := genKeys[g.pick(len(genKeys))]
		if g.chance(0.4) {
			m[k] = nil
		} else {
			m[k] = g.valueWithNulls(depth - 1)
		}
	}
	return m
}
