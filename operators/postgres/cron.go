package postgres

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed backup schedule.
type Schedule struct {
	every  time.Duration
	fields [5]map[int]bool // minute, hour, day of month, month, day of week
}

var cronRanges = [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 6}}

// ParseSchedule parses "@every <duration>", "@hourly", "@daily" or a
// 5-field cron expression (numbers, *, lists, ranges, */n; UTC).
func ParseSchedule(s string) (*Schedule, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "@hourly":
		s = "0 * * * *"
	case "@daily", "@midnight":
		s = "0 0 * * *"
	case "@weekly":
		s = "0 0 * * 0"
	}
	if d, ok := strings.CutPrefix(s, "@every "); ok {
		dur, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || dur < time.Second {
			return nil, fmt.Errorf("schedule %q: want @every <duration of at least 1s>", s)
		}
		return &Schedule{every: dur}, nil
	}
	parts := strings.Fields(s)
	if len(parts) != 5 {
		return nil, fmt.Errorf("schedule %q: want 5 fields", s)
	}
	sc := &Schedule{}
	for i, p := range parts {
		set, err := parseCronField(p, cronRanges[i][0], cronRanges[i][1])
		if err != nil {
			return nil, fmt.Errorf("schedule %q: field %d: %w", s, i+1, err)
		}
		sc.fields[i] = set
	}
	return sc, nil
}

func parseCronField(f string, lo, hi int) (map[int]bool, error) {
	set := map[int]bool{}
	for _, item := range strings.Split(f, ",") {
		step := 1
		if r, st, ok := strings.Cut(item, "/"); ok {
			n, err := strconv.Atoi(st)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("bad step %q", st)
			}
			item, step = r, n
		}
		from, to := lo, hi
		if item != "*" {
			a, b, isRange := strings.Cut(item, "-")
			x, err := strconv.Atoi(a)
			if err != nil {
				return nil, fmt.Errorf("bad value %q", item)
			}
			from, to = x, x
			if isRange {
				if to, err = strconv.Atoi(b); err != nil {
					return nil, fmt.Errorf("bad range %q", item)
				}
			} else if step > 1 {
				to = hi
			}
		}
		if from < lo || to > hi || from > to {
			return nil, fmt.Errorf("%q out of range %d-%d", item, lo, hi)
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	return set, nil
}

// Next returns the first activation strictly after t.
func (s *Schedule) Next(t time.Time) time.Time {
	if s.every > 0 {
		return t.Add(s.every)
	}
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	for end := t.Add(5 * 366 * 24 * time.Hour); t.Before(end); t = t.Add(time.Minute) {
		if s.fields[3][int(t.Month())] && s.fields[2][t.Day()] && s.fields[4][int(t.Weekday())] &&
			s.fields[1][t.Hour()] && s.fields[0][t.Minute()] {
			return t
		}
	}
	return time.Time{}
}
