package patch

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// MaxCopyBytes bounds the total size, in bytes of compact JSON, of the values
// one JSON patch may duplicate with "copy" operations, so a short patch cannot
// blow a document up exponentially. It is the Kubernetes API server's limit
// (JSONPatchMaxCopyBytes, 3 MiB).
const MaxCopyBytes = 3 << 20

// JSONPatch applies a JSON patch (RFC 6902: a JSON array of operations add,
// remove, replace, move, copy and test) to doc, an object or an array, and
// returns the patched document. It applies patches exactly as the Kubernetes
// API server and its admission webhooks do (gopkg.in/evanphx/json-patch.v4
// with negative indexes and a copy limit of MaxCopyBytes), which is more
// lenient than the RFC; clients depend on the differences:
//
//   - "replace" of a missing object member adds it.
//   - "copy" from a missing object member adds null; "test" of a missing
//     member succeeds when the value is null or absent.
//   - A missing "value" means null for add and replace.
//   - Array indexes may be negative (-1 is the last element; for add, -1
//     appends), may have leading zeros or a '+' sign.
//   - "add", "remove", "move" and "copy" cannot target the whole document ("");
//     "replace" and "test" can, and replace takes only an object or array there.
//   - A path not starting with '/' ignores its first segment ("a/b" is "/b").
//     '~' not followed by '0' or '1' is kept literally.
//   - "test" compares numbers and strings by their JSON text (1 and 1.0
//     differ; so do "A" and "\u0041", and "<" and "\u003c", the form
//     encoding/json writes), and fails when it meets a null inside an array.
//   - A move into its own child is an ordinary failure, found when applied.
//
// Operations apply in order; the first failure stops the patch and nothing is
// returned. A patch that is not a JSON array of objects (JSON null is an empty
// patch) yields ErrBadPatch (the API server answers 400); every failure while
// applying, a malformed operation included, yields ErrPatchConflict (422) with
// the library's message.
func JSONPatch(doc, patch []byte) ([]byte, error) {
	ops, err := parseJSONPatch(patch)
	if err != nil {
		return nil, err
	}
	root, err := decodeKeepingText(doc)
	if err != nil {
		return nil, invalidDocument("document", err)
	}
	switch root.(type) {
	case map[string]any:
	case []any:
		if doc[0] != '[' {
			return nil, invalidDocument("document", fmt.Errorf("an array document must start with '['"))
		}
	default:
		return nil, invalidDocument("document", fmt.Errorf("json patch applies to an object or an array, got %s", typeName(root)))
	}
	a := jsonPatcher{root: root}
	for _, op := range ops {
		if err := a.apply(op); err != nil {
			return nil, conflict("", "%s", err.Error())
		}
	}
	out, err := encode(a.root)
	if err != nil {
		return nil, fmt.Errorf("encode patched document: %w", err)
	}
	return out, nil
}

// patchNull is a null that a JSON patch put into the document. The library
// Kubernetes uses tells these apart from nulls that were in the document, and
// so must we: nullFromValue is the value of an add or replace whose "value" is
// null; nullCopied is a copy of one, which the library reads as an object
// without members when it looks inside it. Both encode as null.
type patchNull uint8

const (
	nullFromValue patchNull = iota + 1
	nullCopied
)

// MarshalJSON encodes both kinds as null.
func (patchNull) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// operation is one decoded JSON patch operation. Members that are absent or of
// the wrong type are kept as errors and reported when the operation applies,
// as Kubernetes does.
type operation struct {
	op       string
	path     string
	pathErr  error
	from     string
	fromErr  error
	value    any
	hasValue bool
}

func parseJSONPatch(patch []byte) ([]operation, error) {
	v, err := decodeKeepingText(patch)
	if err != nil {
		return nil, badPatch("", "decode json patch: %v", err)
	}
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, badPatch("", "json patch must be an array of operations, got %s", typeName(v))
	}
	ops := make([]operation, len(list))
	for i, e := range list {
		op := &ops[i]
		op.op = "unknown"
		if e == nil {
			continue
		}
		m, ok := e.(map[string]any)
		if !ok {
			return nil, badPatch(fmt.Sprintf("operation %d", i), "operation must be an object, got %s", typeName(e))
		}
		if s, ok := asString(m["op"]); ok {
			op.op = s
		}
		op.path, op.pathErr = stringMember(m, "path", "operation missing path field")
		op.from, op.fromErr = stringMember(m, "from", "operation, missing from field")
		op.value, op.hasValue = m["value"]
		if op.hasValue && op.value == nil {
			op.value = nullFromValue
		}
	}
	return ops, nil
}

// errMissing words a missing member as the library does.
type errMissing string

func (e errMissing) Error() string { return string(e) + ": missing value" }

// stringMember returns the string member key of an operation; null counts as
// absent.
func stringMember(m map[string]any, key, missing string) (string, error) {
	v := m[key]
	if v == nil {
		return "unknown", errMissing(missing)
	}
	if s, ok := asString(v); ok {
		return s, nil
	}
	return "unknown", fmt.Errorf("json: cannot unmarshal %s into Go value of type string", jsonKind(v))
}

// asString returns the value of a JSON string.
func asString(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case textString:
		return s.s, true
	}
	return "", false
}

// jsonKind names a JSON type as encoding/json's type errors do.
func jsonKind(v any) string {
	if _, ok := v.(bool); ok {
		return "bool"
	}
	return typeName(v)
}

// unescapeToken decodes "~1" to "/" and "~0" to "~", left to right; any other
// '~' stays as it is.
func unescapeToken(t string) string {
	if !strings.Contains(t, "~") {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '~' && i+1 < len(t) && (t[i+1] == '0' || t[i+1] == '1') {
			if t[i+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			i++
			continue
		}
		b.WriteByte(t[i])
	}
	return b.String()
}

type jsonPatcher struct {
	root   any
	copied int
}

// slot is the container a path's last token addresses: an object, an array
// (with where it is stored, to store it back once it grows or shrinks), or a
// copied null, which reads as an empty object that cannot be written.
type slot struct {
	obj map[string]any
	arr []any
	// isArr tells an array (possibly empty) from the other two.
	isArr bool
	// copiedNull marks a nullCopied container.
	copiedNull bool
	// parent and index say where arr is stored: parent is nil for the root,
	// a map[string]any with key, or a []any with idx.
	parent any
	key    string
	idx    int
}

// locate finds the container of the last token of path and returns it with
// that token unescaped. ok is false when the path has no '/' or an
// intermediate value is missing, null, or not a container.
func (a *jsonPatcher) locate(path string) (s slot, key string, ok bool) {
	first := strings.IndexByte(path, '/')
	if first < 0 {
		return slot{}, "", false
	}
	rest := path[first+1:]
	s = a.slotOf(a.root, nil, "", 0)
	for {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return s, unescapeToken(rest), true
		}
		tok := unescapeToken(rest[:i])
		rest = rest[i+1:]
		var next any
		switch {
		case s.isArr:
			idx, err := arrayGetIndex(tok, len(s.arr))
			if err != nil {
				return slot{}, "", false
			}
			next = s.arr[idx]
			s = a.slotOf(next, s.arr, "", idx)
		case s.copiedNull:
			return slot{}, "", false
		default:
			var found bool
			next, found = s.obj[tok]
			if !found {
				return slot{}, "", false
			}
			s = a.slotOf(next, s.obj, tok, 0)
		}
		if !s.isArr && s.obj == nil && !s.copiedNull {
			return slot{}, "", false
		}
	}
}

// slotOf wraps v, stored in parent at key or idx, as a slot; a value that is
// not a container gives a slot with neither obj nor isArr set.
func (a *jsonPatcher) slotOf(v any, parent any, key string, idx int) slot {
	switch c := v.(type) {
	case map[string]any:
		return slot{obj: c}
	case []any:
		return slot{arr: c, isArr: true, parent: parent, key: key, idx: idx}
	case patchNull:
		if c == nullCopied {
			return slot{copiedNull: true}
		}
	}
	return slot{}
}

// store writes a resized array back where it lives.
func (a *jsonPatcher) store(s slot, arr []any) {
	switch p := s.parent.(type) {
	case nil:
		a.root = arr
	case map[string]any:
		p[s.key] = arr
	case []any:
		p[s.idx] = arr
	}
}

// The messages of JSON patch failures are the library's, capitals included:
// the API server returns them to clients, and tools match on them.
var errInvalidIndex = fmt.Errorf("invalid index referenced")

func invalidIndex(i int) error {
	return fmt.Errorf("Unable to access invalid index: %d: %w", i, errInvalidIndex)
}

// arrayGetIndex resolves an index of an existing element: a decimal as
// strconv.Atoi reads it, negative counting from the end.
func arrayGetIndex(tok string, n int) (int, error) {
	i, err := strconv.Atoi(tok)
	if err != nil {
		return 0, err
	}
	if i < 0 {
		if i < -n {
			return 0, invalidIndex(i)
		}
		i += n
	}
	if i >= n {
		return 0, invalidIndex(i)
	}
	return i, nil
}

// get returns the value at key in s; a missing object member is nil.
func (s slot) get(key string) (any, error) {
	if !s.isArr {
		return s.obj[key], nil
	}
	i, err := arrayGetIndex(key, len(s.arr))
	if err != nil {
		return nil, err
	}
	return s.arr[i], nil
}

var errCopiedNull = fmt.Errorf("cannot write into a copied null")

func (a *jsonPatcher) add(s slot, key string, v any) error {
	switch {
	case s.copiedNull:
		return errCopiedNull
	case !s.isArr:
		s.obj[key] = v
		return nil
	}
	if key == "-" {
		a.store(s, append(s.arr, v))
		return nil
	}
	i, err := strconv.Atoi(key)
	if err != nil {
		return fmt.Errorf("value was not a proper array index: '%s': %w", key, err)
	}
	n := len(s.arr) + 1
	if i >= n {
		return invalidIndex(i)
	}
	if i < 0 {
		if i < -n {
			return invalidIndex(i)
		}
		i += n
	}
	out := make([]any, n)
	copy(out, s.arr[:i])
	out[i] = v
	copy(out[i+1:], s.arr[i:])
	a.store(s, out)
	return nil
}

func (a *jsonPatcher) remove(s slot, key string) error {
	switch {
	case s.copiedNull:
		return fmt.Errorf("Unable to remove nonexistent key: %s: missing value", key)
	case !s.isArr:
		if _, ok := s.obj[key]; !ok {
			return fmt.Errorf("Unable to remove nonexistent key: %s: missing value", key)
		}
		delete(s.obj, key)
		return nil
	}
	i, err := strconv.Atoi(key)
	if err != nil {
		return err
	}
	n := len(s.arr)
	if i >= n {
		return invalidIndex(i)
	}
	if i < 0 {
		if i < -n {
			return invalidIndex(i)
		}
		i += n
	}
	out := make([]any, n-1)
	copy(out, s.arr[:i])
	copy(out[i:], s.arr[i+1:])
	a.store(s, out)
	return nil
}

// set replaces the value at key, which get has found.
func (a *jsonPatcher) set(s slot, key string, v any) error {
	switch {
	case s.copiedNull:
		return errCopiedNull
	case !s.isArr:
		s.obj[key] = v
		return nil
	}
	i, err := arrayGetIndex(key, len(s.arr))
	if err != nil {
		return err
	}
	s.arr[i] = v
	return nil
}

func (a *jsonPatcher) apply(op operation) error {
	switch op.op {
	case "add":
		return a.opAdd(op)
	case "remove":
		return a.opRemove(op)
	case "replace":
		return a.opReplace(op)
	case "move":
		return a.opMove(op)
	case "test":
		return a.opTest(op)
	case "copy":
		return a.opCopy(op)
	}
	return fmt.Errorf("Unexpected kind: %s", op.op)
}

func (a *jsonPatcher) opAdd(op operation) error {
	if op.pathErr != nil {
		return fmt.Errorf("add operation failed to decode path: missing value")
	}
	s, key, ok := a.locate(op.path)
	if !ok {
		return fmt.Errorf("add operation does not apply: doc is missing path: \"%s\": missing value", op.path)
	}
	if err := a.add(s, key, op.value); err != nil {
		return fmt.Errorf("error in add for path: '%s': %w", op.path, err)
	}
	return nil
}

func (a *jsonPatcher) opRemove(op operation) error {
	if op.pathErr != nil {
		return fmt.Errorf("remove operation failed to decode path: missing value")
	}
	s, key, ok := a.locate(op.path)
	if !ok {
		return fmt.Errorf("remove operation does not apply: doc is missing path: \"%s\": missing value", op.path)
	}
	if err := a.remove(s, key); err != nil {
		return fmt.Errorf("error in remove for path: '%s': %w", op.path, err)
	}
	return nil
}

func (a *jsonPatcher) opReplace(op operation) error {
	if op.pathErr != nil {
		return fmt.Errorf("replace operation failed to decode path: %w", op.pathErr)
	}
	if op.path == "" {
		switch op.value.(type) {
		case map[string]any, []any:
			a.root = op.value
			return nil
		}
		if !op.hasValue {
			return fmt.Errorf("replace operation without a value on the whole document")
		}
		return fmt.Errorf("replace operation value must be object or array: %%!w(<nil>)")
	}
	s, key, ok := a.locate(op.path)
	if !ok {
		return fmt.Errorf("replace operation does not apply: doc is missing path: %s: missing value", op.path)
	}
	if _, err := s.get(key); err != nil {
		return fmt.Errorf("replace operation does not apply: doc is missing key: %s: missing value", op.path)
	}
	if err := a.set(s, key, op.value); err != nil {
		return fmt.Errorf("error in remove for path: '%s': %w", op.path, err)
	}
	return nil
}

func (a *jsonPatcher) opMove(op operation) error {
	if op.fromErr != nil {
		return fmt.Errorf("move operation failed to decode from: %w", op.fromErr)
	}
	s, key, ok := a.locate(op.from)
	if !ok {
		return fmt.Errorf("move operation does not apply: doc is missing from path: %s: missing value", op.from)
	}
	v, err := s.get(key)
	if err != nil {
		return fmt.Errorf("error in move for path: '%s': %w", key, err)
	}
	if err := a.remove(s, key); err != nil {
		return fmt.Errorf("error in move for path: '%s': %w", key, err)
	}
	if op.pathErr != nil {
		return fmt.Errorf("move operation failed to decode path: %w", op.pathErr)
	}
	s, key, ok = a.locate(op.path)
	if !ok {
		return fmt.Errorf("move operation does not apply: doc is missing destination path: %s: missing value", op.path)
	}
	if err := a.add(s, key, v); err != nil {
		return fmt.Errorf("error in move for path: '%s': %w", op.path, err)
	}
	return nil
}

func (a *jsonPatcher) opTest(op operation) error {
	if op.pathErr != nil {
		return fmt.Errorf("test operation failed to decode path: %w", op.pathErr)
	}
	if op.path == "" {
		if op.hasValue && testEqual(a.root, op.value) {
			return nil
		}
		return fmt.Errorf("testing value %s failed: test failed", op.path)
	}
	s, key, ok := a.locate(op.path)
	if !ok {
		return fmt.Errorf("test operation does not apply: is missing path: %s: missing value", op.path)
	}
	v, err := s.get(key)
	if err != nil {
		return fmt.Errorf("error in test for path: '%s': %w", op.path, err)
	}
	switch {
	case v == nil:
		if !op.hasValue || op.value == nullFromValue {
			return nil
		}
	case op.hasValue && testEqual(v, op.value):
		return nil
	}
	return fmt.Errorf("testing value %s failed: test failed", op.path)
}

func (a *jsonPatcher) opCopy(op operation) error {
	if op.fromErr != nil {
		return fmt.Errorf("copy operation failed to decode from: %w", op.fromErr)
	}
	s, key, ok := a.locate(op.from)
	if !ok {
		return fmt.Errorf("copy operation does not apply: doc is missing from path: %s: missing value", op.from)
	}
	v, err := s.get(key)
	if err != nil {
		return fmt.Errorf("error in copy for from: '%s': %w", op.from, err)
	}
	if op.pathErr != nil {
		return fmt.Errorf("copy operation failed to decode path: missing value")
	}
	s, key, ok = a.locate(op.path)
	if !ok {
		return fmt.Errorf("copy operation does not apply: doc is missing destination path: %s: missing value", op.path)
	}
	c, size, err := copyForPatch(v)
	if err != nil {
		return fmt.Errorf("error while performing deep copy: %w", err)
	}
	a.copied += size
	if a.copied > MaxCopyBytes {
		return fmt.Errorf("Unable to complete the copy, the accumulated size increase of copy is %d, exceeding the limit %d", a.copied, MaxCopyBytes)
	}
	if err := a.add(s, key, c); err != nil {
		return fmt.Errorf("error while adding value during copy: %w", err)
	}
	return nil
}

// copyForPatch copies v as the library does, through its JSON text: it
// returns the copy and the size of that text. A null put there by the patch
// becomes nullCopied; nulls deeper inside become plain nulls.
func copyForPatch(v any) (any, int, error) {
	switch v.(type) {
	case nil:
		return nil, 0, nil
	case patchNull:
		return nullCopied, len("null"), nil
	}
	text, err := json.Marshal(v)
	if err != nil {
		return nil, 0, err
	}
	return copyPlain(v), len(text), nil
}

// copyPlain copies a container, making the nulls a patch put inside it plain.
func copyPlain(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyPlain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyPlain(e)
		}
		return out
	case patchNull:
		return nil
	case textString:
		return copiedText(x)
	}
	return v
}

// testEqual reports whether the "test" operation finds want (a patch value) at
// a value v of the document, as the library compares: objects by members,
// arrays by elements, scalars by JSON text; a null inside an array never
// compares (the library fails there).
func testEqual(v, want any) bool {
	switch x := v.(type) {
	case map[string]any:
		y, ok := want.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || (xv == nil) != (yv == nil) {
				return false
			}
			if xv != nil && !testEqual(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := want.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i, xv := range x {
			if xv == nil || y[i] == nil || !testEqual(xv, y[i]) {
				return false
			}
		}
		return true
	case patchNull:
		if x == nullCopied {
			y, ok := want.(map[string]any)
			return ok && len(y) == 0
		}
		return want == nullFromValue
	case json.Number:
		y, ok := want.(json.Number)
		return ok && x == y
	case string:
		if y, ok := want.(string); ok {
			return x == y
		}
		return equalText(x, want)
	case textString:
		return equalText(x, want)
	case bool:
		y, ok := want.(bool)
		return ok && x == y
	}
	return false
}

// equalText compares two string values by their JSON text.
func equalText(v, want any) bool {
	a, ok1 := jsonText(v)
	b, ok2 := jsonText(want)
	return ok1 && ok2 && a == b
}
