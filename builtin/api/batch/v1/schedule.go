package v1

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed standard five-field cron schedule (minute hour
// day-of-month month day-of-week), as CronJob.spec.schedule uses.
type Schedule struct {
	minute, hour, dom, month, dow uint64
	// domStar and dowStar record a "*" or "?" field: when either is set both
	// fields must match, otherwise either may (cron's classic rule).
	domStar, dowStar bool
}

type bounds struct {
	min, max int
	names    map[string]int
}

var (
	minuteBounds = bounds{0, 59, nil}
	hourBounds   = bounds{0, 23, nil}
	domBounds    = bounds{1, 31, nil}
	monthBounds  = bounds{1, 12, map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}}
	dowBounds = bounds{0, 6, map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}}
)

var macros = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// ParseSchedule parses a standard cron expression: five fields with "*", "?",
// numbers, names (jan-dec, sun-sat), ranges "a-b", steps "/n" and lists "a,b",
// or one of the macros @yearly, @annually, @monthly, @weekly, @daily, @midnight,
// @hourly. Day-of-week 7 means Sunday. Time zone prefixes are not accepted.
func ParseSchedule(spec string) (*Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("empty spec string")
	}
	if strings.HasPrefix(spec, "@") {
		m, ok := macros[spec]
		if !ok {
			return nil, fmt.Errorf("unrecognized descriptor: %s", spec)
		}
		spec = m
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return nil, fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	s := &Schedule{}
	var err error
	if s.minute, _, err = parseField(fields[0], minuteBounds); err != nil {
		return nil, err
	}
	if s.hour, _, err = parseField(fields[1], hourBounds); err != nil {
		return nil, err
	}
	if s.dom, s.domStar, err = parseField(fields[2], domBounds); err != nil {
		return nil, err
	}
	if s.month, _, err = parseField(fields[3], monthBounds); err != nil {
		return nil, err
	}
	dow := bounds{0, 7, dowBounds.names}
	if s.dow, s.dowStar, err = parseField(fields[4], dow); err != nil {
		return nil, err
	}
	if s.dow&(1<<7) != 0 {
		s.dow |= 1
		s.dow &^= 1 << 7
	}
	return s, nil
}

func parseField(f string, b bounds) (bits uint64, star bool, err error) {
	for _, part := range strings.Split(f, ",") {
		v, st, err := parseRange(part, b)
		if err != nil {
			return 0, false, err
		}
		bits |= v
		star = star || st
	}
	return bits, star, nil
}

func parseRange(expr string, b bounds) (uint64, bool, error) {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	singleDigit := len(lowAndHigh) == 1
	var start, end int
	star := false
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		start, end, star = b.min, b.max, true
	} else {
		var err error
		if start, err = parseValue(lowAndHigh[0], b.names); err != nil {
			return 0, false, err
		}
		switch len(lowAndHigh) {
		case 1:
			end = start
		case 2:
			if end, err = parseValue(lowAndHigh[1], b.names); err != nil {
				return 0, false, err
			}
		default:
			return 0, false, fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	step := 1
	switch len(rangeAndStep) {
	case 1:
	case 2:
		var err error
		if step, err = parseInt(rangeAndStep[1]); err != nil {
			return 0, false, err
		}
		if singleDigit && !star {
			end = b.max
		}
		if step > 1 {
			star = false
		}
	default:
		return 0, false, fmt.Errorf("too many slashes: %s", expr)
	}
	switch {
	case start < b.min:
		return 0, false, fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, b.min, expr)
	case end > b.max:
		return 0, false, fmt.Errorf("end of range (%d) above maximum (%d): %s", end, b.max, expr)
	case start > end:
		return 0, false, fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	case step == 0:
		return 0, false, fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	var bits uint64
	for i := start; i <= end; i += step {
		bits |= 1 << uint(i)
	}
	return bits, star, nil
}

func parseValue(s string, names map[string]int) (int, error) {
	if names != nil {
		if v, ok := names[strings.ToLower(s)]; ok {
			return v, nil
		}
	}
	return parseInt(s)
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %w", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, s)
	}
	return n, nil
}

// Next returns the first activation strictly after t, in t's location, or the
// zero time if there is none within five years.
func (s *Schedule) Next(t time.Time) time.Time {
	loc := t.Location()
	t = t.Add(time.Minute - time.Duration(t.Second())*time.Second - time.Duration(t.Nanosecond()))
	limit := t.Year() + 5
	for t.Year() <= limit {
		switch {
		case s.month&(1<<uint(t.Month())) == 0:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, loc)
		case !s.dayMatches(t):
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, loc)
		case s.hour&(1<<uint(t.Hour())) == 0:
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour()+1, 0, 0, 0, loc)
		case s.minute&(1<<uint(t.Minute())) == 0:
			t = t.Add(time.Minute)
		default:
			return t
		}
	}
	return time.Time{}
}

func (s *Schedule) dayMatches(t time.Time) bool {
	domMatch := s.dom&(1<<uint(t.Day())) != 0
	dowMatch := s.dow&(1<<uint(t.Weekday())) != 0
	if s.domStar || s.dowStar {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}
