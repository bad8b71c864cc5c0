package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/converge-dev/converge/operators"
)

// Validator validates the objects of one kind, decoded into T (the kind's Go
// type, e.g. v1.Widget). A non-nil error denies the request with its message
// (see Denied); warnings are shown to the client either way.
type Validator[T any] interface {
	ValidateCreate(ctx context.Context, obj *T) (Warnings, error)
	ValidateUpdate(ctx context.Context, oldObj, newObj *T) (Warnings, error)
	ValidateDelete(ctx context.Context, obj *T) (Warnings, error)
}

// Defaulter sets the defaults of objects of one kind on create and update.
// The webhook answers with the JSON patch from the object it received to the
// defaulted one. An error denies the request.
type Defaulter[T any] interface {
	Default(ctx context.Context, obj *T) error
}

type requestKey struct{}

// RequestFrom returns the AdmissionRequest being handled, for typed handlers
// that need its user, operation or dry-run flag.
func RequestFrom(ctx context.Context) (*AdmissionRequest, bool) {
	r, ok := ctx.Value(requestKey{}).(*AdmissionRequest)
	return r, ok
}

func decodeObject[T any](raw json.RawMessage, what string) (*T, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("the request has no %s", what)
	}
	obj := new(T)
	if err := json.Unmarshal(raw, obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	return obj, nil
}

// ValidatingHandler serves v as a validating admission webhook.
func ValidatingHandler[T any](v Validator[T]) http.Handler {
	return ServeAdmission(ValidatingAdmission(v))
}

// ValidatingAdmission is v as an AdmissionHandler (to wrap, see Converted).
func ValidatingAdmission[T any](v Validator[T]) AdmissionHandler {
	return AdmissionFunc(func(ctx context.Context, req *AdmissionRequest) *AdmissionResponse {
		ctx = context.WithValue(ctx, requestKey{}, req)
		var (
			warnings Warnings
			err      error
		)
		switch req.Operation {
		case Create:
			obj, derr := decodeObject[T](req.Object, "object")
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			warnings, err = v.ValidateCreate(ctx, obj)
		case Update:
			obj, derr := decodeObject[T](req.Object, "object")
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			old, derr := decodeObject[T](req.OldObject, "oldObject")
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			warnings, err = v.ValidateUpdate(ctx, old, obj)
		case Delete:
			old, derr := decodeObject[T](req.OldObject, "oldObject")
			if derr != nil {
				return Errored(http.StatusBadRequest, derr)
			}
			warnings, err = v.ValidateDelete(ctx, old)
		default:
			return Allowed()
		}
		if err != nil {
			return Denied(err, warnings...)
		}
		return Allowed(warnings...)
	})
}

// MutatingHandler serves d as a mutating admission webhook (CREATE and
// UPDATE; other operations are allowed unchanged).
func MutatingHandler[T any](d Defaulter[T]) http.Handler {
	return ServeAdmission(MutatingAdmission(d))
}

// MutatingAdmission is d as an AdmissionHandler (to wrap, see Converted).
func MutatingAdmission[T any](d Defaulter[T]) AdmissionHandler {
	return AdmissionFunc(func(ctx context.Context, req *AdmissionRequest) *AdmissionResponse {
		if req.Operation != Create && req.Operation != Update {
			return Allowed()
		}
		ctx = context.WithValue(ctx, requestKey{}, req)
		obj, err := decodeObject[T](req.Object, "object")
		if err != nil {
			return Errored(http.StatusBadRequest, err)
		}
		if err := d.Default(ctx, obj); err != nil {
			return Denied(err)
		}
		out, err := json.Marshal(obj)
		if err != nil {
			return Errored(http.StatusInternalServerError, fmt.Errorf("encode defaulted object: %w", err))
		}
		return PatchResponse(req.Object, out)
	})
}

// PatchResponse admits the request with the JSON patch from the original
// object to the modified one (no patch when they are equal).
func PatchResponse(original, modified []byte) *AdmissionResponse {
	ops, err := CreateJSONPatch(original, modified)
	if err != nil {
		return Errored(http.StatusInternalServerError, err)
	}
	if len(ops) == 0 {
		return Allowed()
	}
	p, err := json.Marshal(ops)
	if err != nil {
		return Errored(http.StatusInternalServerError, fmt.Errorf("encode patch: %w", err))
	}
	pt := "JSONPatch"
	return &AdmissionResponse{Allowed: true, Patch: p, PatchType: &pt}
}

// Rule selects resource (plural, "widgets") of group/version for ops
// (default CREATE and UPDATE).
func Rule(group, version, resource string, ops ...Operation) operators.WebhookRule {
	if len(ops) == 0 {
		ops = []Operation{Create, Update}
	}
	r := operators.WebhookRule{APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}
	for _, o := range ops {
		r.Operations = append(r.Operations, string(o))
	}
	return r
}

// Validating declares a validating webhook served at path for the requests
// rules select (see Rule).
func Validating[T any](path string, v Validator[T], rules ...operators.WebhookRule) operators.Webhook {
	return operators.Webhook{Type: operators.Validating, Path: path, Handler: ValidatingHandler(v), Rules: rules}
}

// Mutating declares a defaulting webhook served at path.
func Mutating[T any](path string, d Defaulter[T], rules ...operators.WebhookRule) operators.Webhook {
	return operators.Webhook{Type: operators.Mutating, Path: path, Handler: MutatingHandler(d), Rules: rules}
}

// Raw declares an admission webhook of type typ (operators.Validating or
// operators.Mutating) served by h.
func Raw(typ operators.WebhookType, path string, h AdmissionHandler, rules ...operators.WebhookRule) operators.Webhook {
	return operators.Webhook{Type: typ, Path: path, Handler: ServeAdmission(h), Rules: rules}
}

// errNoHandler is returned for a webhook without a handler.
var errNoHandler = errors.New("no handler")
