package field

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// ErrorType classifies a field error; its String is the text Kubernetes prints and
// Reason the value of Status.details.causes[].reason.
type ErrorType string

// The error types, with Kubernetes' cause reasons as values.
const (
	ErrorTypeNotFound     ErrorType = "FieldValueNotFound"
	ErrorTypeRequired     ErrorType = "FieldValueRequired"
	ErrorTypeDuplicate    ErrorType = "FieldValueDuplicate"
	ErrorTypeInvalid      ErrorType = "FieldValueInvalid"
	ErrorTypeNotSupported ErrorType = "FieldValueNotSupported"
	ErrorTypeForbidden    ErrorType = "FieldValueForbidden"
	ErrorTypeTooLong      ErrorType = "FieldValueTooLong"
	ErrorTypeTooMany      ErrorType = "FieldValueTooMany"
	ErrorTypeInternal     ErrorType = "InternalError"
	ErrorTypeTypeInvalid  ErrorType = "FieldValueTypeInvalid"
)

// String is the human text of the type.
func (t ErrorType) String() string {
	switch t {
	case ErrorTypeNotFound:
		return "Not found"
	case ErrorTypeRequired:
		return "Required value"
	case ErrorTypeDuplicate:
		return "Duplicate value"
	case ErrorTypeInvalid, ErrorTypeTypeInvalid:
		return "Invalid value"
	case ErrorTypeNotSupported:
		return "Unsupported value"
	case ErrorTypeForbidden:
		return "Forbidden"
	case ErrorTypeTooLong:
		return "Too long"
	case ErrorTypeTooMany:
		return "Too many"
	case ErrorTypeInternal:
		return "Internal error"
	}
	return string(t)
}

type omitValueType struct{}

// OmitValue as a BadValue leaves the value out of the message.
var OmitValue = omitValueType{}

// Error is one validation failure.
type Error struct {
	Type     ErrorType
	Field    string
	BadValue any
	Detail   string
}

// Error renders "<field>: <body>".
func (e *Error) Error() string { return e.Field + ": " + e.ErrorBody() }

// ErrorBody renders the message without the field path, in Kubernetes' format.
func (e *Error) ErrorBody() string {
	var s string
	switch {
	case e.Type == ErrorTypeRequired, e.Type == ErrorTypeForbidden, e.Type == ErrorTypeTooLong, e.Type == ErrorTypeInternal:
		s = e.Type.String()
	case e.BadValue == OmitValue:
		s = e.Type.String()
	default:
		s = e.Type.String() + ": " + FormatValue(e.BadValue)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// FormatValue renders a bad value the way Kubernetes does: strings quoted, simple
// values bare, nil as "null".
func FormatValue(value any) string {
	if value == nil {
		return "null"
	}
	rv := reflect.ValueOf(value)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "null"
		}
		value = rv.Elem().Interface()
	}
	switch t := value.(type) {
	case int64, int32, int, float64, float32, bool, uint, uint32, uint64:
		return fmt.Sprintf("%v", t)
	case string:
		return strconv.Quote(t)
	case fmt.Stringer:
		return t.String()
	default:
		return fmt.Sprintf("%#v", value)
	}
}

// ErrorList is a list of field errors.
type ErrorList []*Error

// ToError returns nil for an empty list and an error listing every message otherwise,
// "[e1, e2]" when there are several, like Kubernetes' aggregate.
func (l ErrorList) ToError() error {
	if len(l) == 0 {
		return nil
	}
	return aggregate(l)
}

type aggregate ErrorList

func (a aggregate) Error() string {
	seen := map[string]bool{}
	var msgs []string
	for _, e := range a {
		m := e.Error()
		if seen[m] {
			continue
		}
		seen[m] = true
		msgs = append(msgs, m)
	}
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

// Required reports a missing required value.
func Required(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeRequired, Field: p.String(), BadValue: "", Detail: detail}
}

// Invalid reports a malformed value.
func Invalid(p *Path, value any, detail string) *Error {
	return &Error{Type: ErrorTypeInvalid, Field: p.String(), BadValue: value, Detail: detail}
}

// TypeInvalid reports a value of the wrong type.
func TypeInvalid(p *Path, value any, detail string) *Error {
	return &Error{Type: ErrorTypeTypeInvalid, Field: p.String(), BadValue: value, Detail: detail}
}

// NotSupported reports a value outside the allowed set.
func NotSupported(p *Path, value any, valid []string) *Error {
	detail := ""
	if len(valid) > 0 {
		q := make([]string, len(valid))
		for i, v := range valid {
			q[i] = strconv.Quote(v)
		}
		detail = "supported values: " + strings.Join(q, ", ")
	}
	return &Error{Type: ErrorTypeNotSupported, Field: p.String(), BadValue: value, Detail: detail}
}

// Forbidden reports a value that may not be set.
func Forbidden(p *Path, detail string) *Error {
	return &Error{Type: ErrorTypeForbidden, Field: p.String(), BadValue: "", Detail: detail}
}

// Duplicate reports a repeated value.
func Duplicate(p *Path, value any) *Error {
	return &Error{Type: ErrorTypeDuplicate, Field: p.String(), BadValue: value}
}

// NotFound reports a reference to something that does not exist.
func NotFound(p *Path, value any) *Error {
	return &Error{Type: ErrorTypeNotFound, Field: p.String(), BadValue: value}
}

// TooLong reports a string longer than maxLength bytes.
func TooLong(p *Path, value any, maxLength int) *Error {
	return &Error{Type: ErrorTypeTooLong, Field: p.String(), BadValue: value,
		Detail: fmt.Sprintf("may not be more than %d bytes", maxLength)}
}

// TooMany reports a list or map with more than max entries.
func TooMany(p *Path, actual, max int) *Error {
	return &Error{Type: ErrorTypeTooMany, Field: p.String(), BadValue: actual,
		Detail: fmt.Sprintf("must have at most %d items", max)}
}

// InternalError reports an unexpected failure while validating.
func InternalError(p *Path, err error) *Error {
	return &Error{Type: ErrorTypeInternal, Field: p.String(), Detail: err.Error()}
}
