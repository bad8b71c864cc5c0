package patch

import (
	"errors"
	"fmt"
)

// Sentinel errors classifying a patch failure; match them with errors.Is.
var (
	// ErrBadPatch means the patch is malformed: not valid JSON, the wrong shape
	// (a JSON patch that is not an array of objects, a merge patch that is not
	// an object or array), or an unknown strategic merge patch directive.
	// Servers answer 400.
	ErrBadPatch = errors.New("patch: malformed patch")
	// ErrPatchConflict means a patch cannot be applied to this document: a path
	// does not exist, an index is out of range, a JSON patch "test" operation
	// failed, or a JSON patch operation is malformed (Kubernetes finds those
	// while applying, and answers 422 too). Servers answer 422.
	ErrPatchConflict = errors.New("patch: cannot apply patch to document")
	// ErrInvalidDocument means the document being patched (or an input of
	// CreateMergePatch) is not valid JSON of the expected shape.
	ErrInvalidDocument = errors.New("patch: invalid document")
)

// Error describes a failed patch: what kind of failure (one of the sentinels),
// where in the document or patch it happened, and why.
type Error struct {
	// Kind is ErrBadPatch, ErrPatchConflict or ErrInvalidDocument.
	Kind error
	// Path locates the failure: a dotted field path for strategic merge patch,
	// the operation's index for a JSON patch operation that is not an object.
	// It is empty when the failure concerns the whole input, and for JSON patch
	// conflicts, whose Reason names the path in Kubernetes' words.
	Path string
	// Reason is a human-readable explanation.
	Reason string
}

// Error renders "<reason> at <path>" (or just the reason without a path).
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Reason + " at " + e.Path
}

// Unwrap returns Kind so errors.Is matches the sentinels.
func (e *Error) Unwrap() error { return e.Kind }

func badPatch(path, format string, args ...any) error {
	return &Error{Kind: ErrBadPatch, Path: path, Reason: fmt.Sprintf(format, args...)}
}

func conflict(path, format string, args ...any) error {
	return &Error{Kind: ErrPatchConflict, Path: path, Reason: fmt.Sprintf(format, args...)}
}

func invalidDocument(what string, err error) error {
	return &Error{Kind: ErrInvalidDocument, Reason: fmt.Sprintf("decode %s: %v", what, err)}
}
