package errors

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/field"
)

// Reasons, as in Status.reason.
const (
	ReasonUnknown               = ""
	ReasonUnauthorized          = "Unauthorized"
	ReasonForbidden             = "Forbidden"
	ReasonNotFound              = "NotFound"
	ReasonAlreadyExists         = "AlreadyExists"
	ReasonConflict              = "Conflict"
	ReasonGone                  = "Gone"
	ReasonInvalid               = "Invalid"
	ReasonServerTimeout         = "ServerTimeout"
	ReasonTimeout               = "Timeout"
	ReasonTooManyRequests       = "TooManyRequests"
	ReasonBadRequest            = "BadRequest"
	ReasonMethodNotAllowed      = "MethodNotAllowed"
	ReasonNotAcceptable         = "NotAcceptable"
	ReasonRequestEntityTooLarge = "RequestEntityTooLarge"
	ReasonUnsupportedMediaType  = "UnsupportedMediaType"
	ReasonInternalError         = "InternalError"
	ReasonExpired               = "Expired"
	ReasonServiceUnavailable    = "ServiceUnavailable"
)

// StatusError is an error carrying a Kubernetes Status.
type StatusError struct {
	ErrStatus api.Status
}

// Error returns the status message.
func (e *StatusError) Error() string { return e.ErrStatus.Message }

// Status returns the Status with kind and apiVersion set, ready to serialise.
func (e *StatusError) Status() api.Status {
	s := e.ErrStatus
	s.Kind, s.APIVersion = "Status", "v1"
	if s.Status == "" {
		s.Status = api.StatusFailure
	}
	return s
}

func newError(code int, reason, msg string, details *api.StatusDetails) *StatusError {
	return &StatusError{ErrStatus: api.Status{
		Status: api.StatusFailure, Code: int32(code), Reason: reason, Message: msg, Details: details,
	}}
}

// FromStatus wraps a Status received from a server.
func FromStatus(s api.Status) *StatusError { return &StatusError{ErrStatus: s} }

// NewNotFound: `pods "x" not found`.
func NewNotFound(gr api.GroupResource, name string) *StatusError {
	return newError(http.StatusNotFound, ReasonNotFound, fmt.Sprintf("%s %q not found", gr, name),
		&api.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewAlreadyExists: `pods "x" already exists`.
func NewAlreadyExists(gr api.GroupResource, name string) *StatusError {
	return newError(http.StatusConflict, ReasonAlreadyExists, fmt.Sprintf("%s %q already exists", gr, name),
		&api.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// OptimisticLockMessage is the detail of a stale-resourceVersion conflict.
const OptimisticLockMessage = "the object has been modified; please apply your changes to the latest version and try again"

// NewConflict: `Operation cannot be fulfilled on pods "x": <detail>`.
func NewConflict(gr api.GroupResource, name string, detail string) *StatusError {
	return newError(http.StatusConflict, ReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", gr, name, detail),
		&api.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewInvalid: `Pod "x" is invalid: <errors>`, one cause per field error.
func NewInvalid(gk api.GroupKind, name string, errs field.ErrorList) *StatusError {
	causes := make([]api.StatusCause, 0, len(errs))
	for _, e := range errs {
		causes = append(causes, api.StatusCause{Type: string(e.Type), Message: e.ErrorBody(), Field: e.Field})
	}
	msg := fmt.Sprintf("%s %q is invalid", gk, name)
	if agg := errs.ToError(); agg != nil {
		msg += ": " + agg.Error()
	}
	return newError(http.StatusUnprocessableEntity, ReasonInvalid, msg,
		&api.StatusDetails{Name: name, Group: gk.Group, Kind: gk.Kind, Causes: causes})
}

// NewBadRequest is a 400 with the given message.
func NewBadRequest(msg string) *StatusError {
	return newError(http.StatusBadRequest, ReasonBadRequest, msg, nil)
}

// NewResourceExpired is a 410 Expired (too old resourceVersion, stale continue token).
func NewResourceExpired(msg string) *StatusError {
	return newError(http.StatusGone, ReasonExpired, msg, nil)
}

// NewGone is a 410 Gone.
func NewGone(msg string) *StatusError { return newError(http.StatusGone, ReasonGone, msg, nil) }

// NewMethodNotSupported: `<verb> is not supported on resources of kind "pods"`.
func NewMethodNotSupported(gr api.GroupResource, verb string) *StatusError {
	return newError(http.StatusMethodNotAllowed, ReasonMethodNotAllowed,
		fmt.Sprintf("%s is not supported on resources of kind %q", verb, gr.String()),
		&api.StatusDetails{Group: gr.Group, Kind: gr.Resource})
}

// NewUnsupportedMediaType is a 415 naming the accepted media types.
func NewUnsupportedMediaType(contentType string, accepted []string) *StatusError {
	return newError(http.StatusUnsupportedMediaType, ReasonUnsupportedMediaType,
		fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: %s", strings.Join(accepted, ", ")), nil)
}

// NewNotAcceptable is a 406.
func NewNotAcceptable(msg string) *StatusError {
	return newError(http.StatusNotAcceptable, ReasonNotAcceptable, msg, nil)
}

// NewRequestEntityTooLarge is a 413.
func NewRequestEntityTooLarge(msg string) *StatusError {
	return newError(http.StatusRequestEntityTooLarge, ReasonRequestEntityTooLarge, "Request entity too large: "+msg, nil)
}

// NewInternalError is a 500 wrapping err.
func NewInternalError(err error) *StatusError {
	return newError(http.StatusInternalServerError, ReasonInternalError,
		fmt.Sprintf("Internal error occurred: %v", err),
		&api.StatusDetails{Causes: []api.StatusCause{{Message: err.Error()}}})
}

// NewTimeout is a 504 for a request that could not complete in time.
func NewTimeout(msg string, causes ...api.StatusCause) *StatusError {
	var d *api.StatusDetails
	if len(causes) > 0 {
		d = &api.StatusDetails{Causes: causes}
	}
	return newError(http.StatusGatewayTimeout, ReasonTimeout, msg, d)
}

// NewTooManyRequests is a 429 with Retry-After seconds.
func NewTooManyRequests(msg string, retryAfterSeconds int) *StatusError {
	return newError(http.StatusTooManyRequests, ReasonTooManyRequests, msg,
		&api.StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)})
}

// NewServiceUnavailable is a 503.
func NewServiceUnavailable(msg string) *StatusError {
	return newError(http.StatusServiceUnavailable, ReasonServiceUnavailable, msg, nil)
}

// NewForbidden: `pods "x" is forbidden: <err>`.
func NewForbidden(gr api.GroupResource, name string, err error) *StatusError {
	var msg string
	if name == "" {
		msg = fmt.Sprintf("%s is forbidden: %v", gr, err)
	} else {
		msg = fmt.Sprintf("%s %q is forbidden: %v", gr, name, err)
	}
	return newError(http.StatusForbidden, ReasonForbidden, msg,
		&api.StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewUnauthorized is a 401.
func NewUnauthorized(msg string) *StatusError {
	if msg == "" {
		msg = "Unauthorized"
	}
	return newError(http.StatusUnauthorized, ReasonUnauthorized, msg, nil)
}

// ReasonForError returns the Status reason of err, or "" if it carries none.
func ReasonForError(err error) string {
	var se *StatusError
	if errors.As(err, &se) {
		return se.ErrStatus.Reason
	}
	return ReasonUnknown
}

// CodeForError returns the HTTP code of err, or 0 if it carries none.
func CodeForError(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return int(se.ErrStatus.Code)
	}
	return 0
}

func hasReasonOrCode(err error, reason string, code int) bool {
	var se *StatusError
	if !errors.As(err, &se) {
		return false
	}
	if se.ErrStatus.Reason == reason {
		return true
	}
	return se.ErrStatus.Reason == ReasonUnknown && int(se.ErrStatus.Code) == code
}

// IsNotFound reports a 404 NotFound.
func IsNotFound(err error) bool { return hasReasonOrCode(err, ReasonNotFound, http.StatusNotFound) }

// IsAlreadyExists reports a 409 AlreadyExists.
func IsAlreadyExists(err error) bool { return ReasonForError(err) == ReasonAlreadyExists }

// IsConflict reports a 409 Conflict (stale resourceVersion, failed precondition).
func IsConflict(err error) bool { return hasReasonOrCode(err, ReasonConflict, http.StatusConflict) }

// IsInvalid reports a 422 Invalid.
func IsInvalid(err error) bool {
	return hasReasonOrCode(err, ReasonInvalid, http.StatusUnprocessableEntity)
}

// IsGone reports a 410 (Gone or Expired): the client must relist.
func IsGone(err error) bool {
	r := ReasonForError(err)
	return r == ReasonGone || r == ReasonExpired || CodeForError(err) == http.StatusGone
}

// IsResourceExpired reports a 410 Expired.
func IsResourceExpired(err error) bool { return ReasonForError(err) == ReasonExpired }

// IsBadRequest reports a 400.
func IsBadRequest(err error) bool {
	return hasReasonOrCode(err, ReasonBadRequest, http.StatusBadRequest)
}

// IsForbidden reports a 403.
func IsForbidden(err error) bool { return hasReasonOrCode(err, ReasonForbidden, http.StatusForbidden) }

// IsUnauthorized reports a 401.
func IsUnauthorized(err error) bool {
	return hasReasonOrCode(err, ReasonUnauthorized, http.StatusUnauthorized)
}

// IsMethodNotSupported reports a 405.
func IsMethodNotSupported(err error) bool {
	return hasReasonOrCode(err, ReasonMethodNotAllowed, http.StatusMethodNotAllowed)
}

// IsTooManyRequests reports a 429.
func IsTooManyRequests(err error) bool {
	return hasReasonOrCode(err, ReasonTooManyRequests, http.StatusTooManyRequests)
}

// IsTimeout reports a 504 Timeout.
func IsTimeout(err error) bool { return hasReasonOrCode(err, ReasonTimeout, http.StatusGatewayTimeout) }

// IsInternalError reports a 500.
func IsInternalError(err error) bool {
	return hasReasonOrCode(err, ReasonInternalError, http.StatusInternalServerError)
}

// IsServiceUnavailable reports a 503.
func IsServiceUnavailable(err error) bool {
	return hasReasonOrCode(err, ReasonServiceUnavailable, http.StatusServiceUnavailable)
}

// IsUnsupportedMediaType reports a 415.
func IsUnsupportedMediaType(err error) bool {
	return hasReasonOrCode(err, ReasonUnsupportedMediaType, http.StatusUnsupportedMediaType)
}
