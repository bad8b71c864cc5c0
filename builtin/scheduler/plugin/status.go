package plugin

import (
	"errors"
	"strings"
)

// Code is the result class of a plugin call.
type Code int

// Status codes, with kube-scheduler's meanings.
const (
	// Success: the plugin ran and the pod may proceed. A nil *Status is Success.
	Success Code = iota
	// Error: an internal failure; the pod is retried with backoff.
	Error
	// Unschedulable: the pod does not fit now; preemption may help.
	Unschedulable
	// UnschedulableAndUnresolvable: the pod does not fit and preemption of pods
	// on this node cannot change that.
	UnschedulableAndUnresolvable
	// Wait: only from Permit; the pod waits for approval.
	Wait
	// Skip: the plugin has nothing to do for this pod; from PreFilter/PreScore it
	// skips the plugin's Filter/Score, from Bind it passes to the next binder.
	Skip
	// Pending: the pod waits for something outside the scheduler (PreEnqueue).
	Pending
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

// String returns the code's name.
func (c Code) String() string {
	if c >= 0 && int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "Unknown"
}

// Status is the result of a plugin call: a code, human-readable reasons, an
// optional error and the name of the plugin that produced it. nil means Success.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
}

// NewStatus returns a status with the code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{code: code, reasons: reasons}
}

// AsStatus wraps an error in an Error status; nil gives nil.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the status code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons returns the reasons (shared; do not modify).
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	if s.err != nil && len(s.reasons) == 0 {
		return []string{s.err.Error()}
	}
	return s.reasons
}

// Message joins the reasons with ", ".
func (s *Status) Message() string {
	return strings.Join(s.Reasons(), ", ")
}

// Plugin returns the name of the plugin that produced the status, if recorded.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin records the producing plugin and returns s.
func (s *Status) WithPlugin(name string) *Status {
	if s != nil {
		s.plugin = name
	}
	return s
}

// AppendReason adds a reason.
func (s *Status) AppendReason(reason string) {
	s.reasons = append(s.reasons, reason)
}

// WithError attaches an error and returns s.
func (s *Status) WithError(err error) *Status {
	s.err = err
	return s
}

// Err returns the attached error, if any.
func (s *Status) Err() error {
	if s == nil {
		return nil
	}
	return s.err
}

// IsSuccess reports Success (or nil).
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsWait reports Wait.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsSkip reports Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected reports Unschedulable, UnschedulableAndUnresolvable or Pending.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable || c == Pending
}

// AsError returns nil for Success/Skip/Wait and an error otherwise; the
// attached error is wrapped so errors.Is/As see it.
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsWait() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// Equal compares code, reasons and plugin (errors by message).
func (s *Status) Equal(o *Status) bool {
	if s == nil || o == nil {
		return s.IsSuccess() && o.IsSuccess()
	}
	if s.code != o.code || s.plugin != o.plugin || len(s.Reasons()) != len(o.Reasons()) {
		return false
	}
	for i, r := range s.Reasons() {
		if o.Reasons()[i] != r {
			return false
		}
	}
	return true
}

// String renders code and message, for logs and tests.
func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	return s.code.String() + ": " + s.Message()
}
