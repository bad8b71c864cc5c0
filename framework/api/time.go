package api

import (
	"encoding/json"
	"time"
)

// Time is a timestamp that serialises as RFC 3339 in UTC with second precision,
// like Kubernetes' metav1.Time. The zero value serialises as null.
type Time struct {
	time.Time `protobuf:"-"`
}

// Now returns the current time truncated to seconds.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Second)} }

// NewTime wraps t.
func NewTime(t time.Time) Time { return Time{t} }

// NewTimePtr returns a pointer to a Time wrapping t.
func NewTimePtr(t time.Time) *Time { v := Time{t}; return &v }

// IsZero reports whether t is nil or the zero time.
func (t *Time) IsZero() bool { return t == nil || t.Time.IsZero() }

// MarshalJSON renders RFC 3339 UTC seconds, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.Time.IsZero() {
		return []byte("null"), nil
	}
	return quoteTime(t.UTC(), time.RFC3339), nil
}

// UnmarshalJSON accepts RFC 3339 (with or without fractional seconds) or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	pt, err := parseJSONTime(b, time.RFC3339)
	if err != nil {
		return err
	}
	t.Time = pt
	return nil
}

// MicroTime is a timestamp with microsecond precision (RFC 3339 with six fractional
// digits), used by Leases and events.k8s.io Events.
type MicroTime struct {
	time.Time `protobuf:"-"`
}

// NowMicro returns the current time truncated to microseconds.
func NowMicro() MicroTime { return MicroTime{time.Now().UTC().Truncate(time.Microsecond)} }

// MarshalJSON renders RFC 3339 UTC with microseconds, or null for the zero time.
func (t MicroTime) MarshalJSON() ([]byte, error) {
	if t.Time.IsZero() {
		return []byte("null"), nil
	}
	return quoteTime(t.UTC(), "2006-01-02T15:04:05.000000Z07:00"), nil
}

// UnmarshalJSON accepts RFC 3339 with optional fractional seconds, or null.
func (t *MicroTime) UnmarshalJSON(b []byte) error {
	pt, err := parseJSONTime(b, time.RFC3339Nano)
	if err != nil {
		return err
	}
	t.Time = pt
	return nil
}

// Duration is a time.Duration serialised as a Go duration string ("1m30s").
type Duration struct {
	time.Duration `protobuf:"varint,1,opt,name=duration,casttype=time.Duration"`
}

// MarshalJSON renders the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.Duration.String()) }

// UnmarshalJSON parses a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	pd, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = pd
	return nil
}

// quoteTime is json.Marshal(t.Format(layout)) for the layouts above, whose
// text (digits, '-', '+', ':', '.', 'T', 'Z') JSON never escapes.
func quoteTime(t time.Time, layout string) []byte {
	b := make([]byte, 0, len(layout)+8)
	b = append(b, '"')
	b = t.AppendFormat(b, layout)
	return append(b, '"')
}

// unquoteJSON decodes a JSON string as json.Unmarshal into a string does,
// without it for plain ASCII text.
func unquoteJSON(b []byte) (string, error) {
	if n := len(b); n >= 2 && b[0] == '"' && b[n-1] == '"' {
		plain := true
		for _, c := range b[1 : n-1] {
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				plain = false
				break
			}
		}
		if plain {
			return string(b[1 : n-1]), nil
		}
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// parseJSONTime decodes a JSON timestamp in layout (fractional seconds are
// accepted with any layout): null and "" are the zero time, any other time is
// returned in local time.
func parseJSONTime(b []byte, layout string) (time.Time, error) {
	if string(b) == "null" {
		return time.Time{}, nil
	}
	s, err := unquoteJSON(b)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	pt, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, err
	}
	return pt.Local(), nil
}
