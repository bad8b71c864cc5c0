package patch

import (
	"fmt"
	"strconv"
	"strings"
)

// maxCopiedValues bounds the number of JSON values one JSON patch may duplicate
// with "copy" operations, so a short patch cannot blow a document up
// exponentially.
const maxCopiedValues = 1 << 20

// JSONPatch applies an RFC 6902 JSON patch (a JSON array of operations: add,
// remove, replace, move, copy, test) to doc and returns the patched document.
// doc may be any JSON value. Operations apply in order; the first failure stops
// the patch and nothing is returned. JSON pointers use "~0" for "~" and "~1" for
// "/"; "-" as the last token of an add path appends to an array, and an index
// inserts before the element at that index. Removing or replacing a missing
// member, an out-of-range index, or a failing test yields ErrPatchConflict; a
// patch that is not an array of well-formed operations yields ErrBadPatch.
func JSONPatch(doc, patch []byte) ([]byte, error) {
	ops, err := parseJSONPatch(patch)
	if err != nil {
		return nil, err
	}
	root, err := decode(doc)
	if err != nil {
		return nil, invalidDocument("document", err)
	}
	a := jsonPatcher{root: root}
	for i, op := range ops {
		if err := a.apply(op); err != nil {
			if pe, ok := err.(*Error); ok {
				pe.Path = fmt.Sprintf("operation %d (%s %q)", i, op.op, op.pathText)
				if pe.Reason == "" {
					pe.Reason = "failed"
				}
			}
			return nil, err
		}
	}
	out, err := encode(a.root)
	if err != nil {
		return nil, fmt.Errorf("encode patched document: %w", err)
	}
	return out, nil
}

// operation is one parsed JSON patch operation.
type operation struct {
	op       string
	pathText string
	path     []string
	from     []string
	fromText string
	value    any
}

func parseJSONPatch(patch []byte) ([]operation, error) {
	v, err := decode(patch)
	if err != nil {
		return nil, badPatch("", "decode json patch: %v", err)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badPatch("", "json patch must be an array of operations, got %s", typeName(v))
	}
	ops := make([]operation, 0, len(list))
	for i, e := range list {
		where := fmt.Sprintf("operation %d", i)
		m, ok := e.(map[string]any)
		if !ok {
			return nil, badPatch(where, "operation must be an object, got %s", typeName(e))
		}
		var op operation
		if op.op, ok = m["op"].(string); !ok {
			return nil, badPatch(where, `missing or non-string "op"`)
		}
		switch op.op {
		case "add", "remove", "replace", "move", "copy", "test":
		default:
			return nil, badPatch(where, "unknown operation %q", op.op)
		}
		if op.pathText, ok = m["path"].(string); !ok {
			return nil, badPatch(where, `operation %q: missing or non-string "path"`, op.op)
		}
		if op.path, err = parsePointer(op.pathText); err != nil {
			return nil, badPatch(where, "operation %q: path: %v", op.op, err)
		}
		switch op.op {
		case "add", "replace", "test":
			if op.value, ok = m["value"]; !ok {
				return nil, badPatch(where, `operation %q: missing "value"`, op.op)
			}
		case "move", "copy":
			if op.fromText, ok = m["from"].(string); !ok {
				return nil, badPatch(where, `operation %q: missing or non-string "from"`, op.op)
			}
			if op.from, err = parsePointer(op.fromText); err != nil {
				return nil, badPatch(where, "operation %q: from: %v", op.op, err)
			}
			if op.op == "move" && len(op.from) < len(op.path) && hasPrefix(op.path, op.from) {
				return nil, badPatch(where, "cannot move %q into its own child %q", op.fromText, op.pathText)
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// parsePointer splits an RFC 6901 JSON pointer into unescaped reference tokens.
// The empty pointer (the whole document) yields no tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("json pointer %q must be empty or start with '/'", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, t := range parts {
		if !strings.Contains(t, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(t); j++ {
			if t[j] != '~' {
				b.WriteByte(t[j])
				continue
			}
			if j+1 < len(t) && t[j+1] == '0' {
				b.WriteByte('~')
			} else if j+1 < len(t) && t[j+1] == '1' {
				b.WriteByte('/')
			} else {
				return nil, fmt.Errorf("json pointer %q: '~' must be followed by '0' or '1'", p)
			}
			j++
		}
		parts[i] = b.String()
	}
	return parts, nil
}

func hasPrefix(path, prefix []string) bool {
	if len(prefix) > len(path) {
		return false
	}
	for i := range prefix {
		if path[i] != prefix[i] {
			return false
		}
	}
	return true
}

// arrayIndex parses an array index token: "0" or a decimal without leading zeros.
func arrayIndex(tok string, n int, allowEnd bool) (int, error) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, conflict("", "invalid array index %q", tok)
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, conflict("", "invalid array index %q", tok)
		}
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i > n || (i == n && !allowEnd) {
		return 0, conflict("", "array index %s out of range (length %d)", tok, n)
	}
	return i, nil
}

type jsonPatcher struct {
	root   any
	copied int
}

func (a *jsonPatcher) apply(op operation) error {
	switch op.op {
	case "add":
		return a.add(op.path, op.value)
	case "remove":
		_, err := a.remove(op.path)
		return err
	case "replace":
		return a.replace(op.path, op.value)
	case "move":
		if len(op.from) == len(op.path) && hasPrefix(op.path, op.from) {
			_, err := a.get(op.from)
			return err
		}
		v, err := a.remove(op.from)
		if err != nil {
			return err
		}
		return a.add(op.path, v)
	case "copy":
		v, err := a.get(op.from)
		if err != nil {
			return err
		}
		c, n := deepCopy(v)
		a.copied += n
		if a.copied > maxCopiedValues {
			return conflict("", "copy operations duplicate more than %d values", maxCopiedValues)
		}
		return a.add(op.path, c)
	case "test":
		v, err := a.get(op.path)
		if err != nil {
			return err
		}
		if !equal(v, op.value) {
			return conflict("", "test failed: value differs")
		}
		return nil
	}
	return badPatch("", "unknown operation %q", op.op)
}

// get returns the value at path.
func (a *jsonPatcher) get(path []string) (any, error) {
	cur := a.root
	for i, tok := range path {
		next, err := child(cur, tok, path[:i])
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// child returns the member or element tok of container.
func child(container any, tok string, parent []string) (any, error) {
	switch c := container.(type) {
	case map[string]any:
		v, ok := c[tok]
		if !ok {
			return nil, conflict("", "member %q not found in %s", tok, pointerText(parent))
		}
		return v, nil
	case []any:
		i, err := arrayIndex(tok, len(c), false)
		if err != nil {
			return nil, err
		}
		return c[i], nil
	default:
		return nil, conflict("", "cannot look up %q in %s: it is a %s", tok, pointerText(parent), typeName(container))
	}
}

// update replaces, in the tree rooted at node, the parent container of the
// last token of path with fn(parent, lastToken), and returns the new node.
func update(node any, path, seen []string, fn func(parent any, tok string) (any, error)) (any, error) {
	if len(path) == 1 {
		return fn(node, path[0])
	}
	next, err := child(node, path[0], seen)
	if err != nil {
		return nil, err
	}
	newChild, err := update(next, path[1:], append(seen[:len(seen):len(seen)], path[0]), fn)
	if err != nil {
		return nil, err
	}
	switch c := node.(type) {
	case map[string]any:
		c[path[0]] = newChild
	case []any:
		i, _ := arrayIndex(path[0], len(c), false)
		c[i] = newChild
	}
	return node, nil
}

func (a *jsonPatcher) modify(path []string, fn func(parent any, tok string) (any, error)) error {
	root, err := update(a.root, path, nil, fn)
	if err != nil {
		return err
	}
	a.root = root
	return nil
}

func (a *jsonPatcher) add(path []string, value any) error {
	if len(path) == 0 {
		a.root = value
		return nil
	}
	return a.modify(path, func(parent any, tok string) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			c[tok] = value
			return c, nil
		case []any:
			if tok == "-" {
				return append(c, value), nil
			}
			i, err := arrayIndex(tok, len(c), true)
			if err != nil {
				return nil, err
			}
			c = append(c, nil)
			copy(c[i+1:], c[i:])
			c[i] = value
			return c, nil
		default:
			return nil, conflict("", "cannot add %q to a %s", tok, typeName(parent))
		}
	})
}

func (a *jsonPatcher) remove(path []string) (any, error) {
	if len(path) == 0 {
		return nil, conflict("", "cannot remove the whole document")
	}
	var removed any
	err := a.modify(path, func(parent any, tok string) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, conflict("", "member %q not found", tok)
			}
			removed = v
			delete(c, tok)
			return c, nil
		case []any:
			i, err := arrayIndex(tok, len(c), false)
			if err != nil {
				return nil, err
			}
			removed = c[i]
			return append(c[:i:i], c[i+1:]...), nil
		default:
			return nil, conflict("", "cannot remove %q from a %s", tok, typeName(parent))
		}
	})
	return removed, err
}

func (a *jsonPatcher) replace(path []string, value any) error {
	if len(path) == 0 {
		a.root = value
		return nil
	}
	return a.modify(path, func(parent any, tok string) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			if _, ok := c[tok]; !ok {
				return nil, conflict("", "member %q not found", tok)
			}
			c[tok] = value
			return c, nil
		case []any:
			i, err := arrayIndex(tok, len(c), false)
			if err != nil {
				return nil, err
			}
			c[i] = value
			return c, nil
		default:
			return nil, conflict("", "cannot replace %q in a %s", tok, typeName(parent))
		}
	})
}

// pointerText renders tokens as a JSON pointer, "" meaning the document root.
func pointerText(tokens []string) string {
	if len(tokens) == 0 {
		return "the document root"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}
