package postgres

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Schedule is a parsed backup schedule.
type Schedule struct {
	every  time.Duration
	fields [5]map[int]bool // minute, hour, day of month, month, day of week
	// anyDay: day of month or day of week is "*" (then both must match;
	// when both are restricted, either matches, as in cron).
	anyDay bool
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
	sc.anyDay = strings.HasPrefix(parts[2], "*") || strings.HasPrefix(parts[4], "*")
	if sc.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return nil, fmt.Errorf("schedule %q never fires", s)
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

// Next returns the first activation strictly after t (the zero time when
// there is none within five years).
func (s *Schedule) Next(t time.Time) time.Time {
	if s.every > 0 {
		return t.Add(s.every)
	}
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	for end := t.Add(5 * 366 * 24 * time.Hour); t.Before(end); t = t.Add(time.Minute) {
		dom, dow := s.fields[2][t.Day()], s.fields[4][int(t.Weekday())]
		day := dom && dow
		if !s.anyDay {
			day = dom || dow
		}
		if s.fields[3][int(t.Month())] && day && s.fields[1][t.Hour()] && s.fields[0][t.Minute()] {
			return t
		}
	}
	return time.Time{}
}

// ExpiredBackups returns the backups retention deletes at now: the scheduled
// ones (LabelBackupKind=scheduled) that finished (Completed or Failed) more
// than retention ago, except the newest Completed one, which is always kept
// so a cluster whose schedule stopped still has a backup. On-demand and final
// backups are never expired. The result is sorted by name.
func ExpiredBackups(backups []*PostgresBackup, retention time.Duration, now time.Time) []*PostgresBackup {
	var newest *PostgresBackup
	var finished []*PostgresBackup
	for _, b := range backups {
		if b.Labels[LabelBackupKind] != BackupKindScheduled || b.DeletionTimestamp != nil || b.Status.CompletedAt == nil {
			continue
		}
		switch b.Status.Phase {
		case BackupCompleted:
			if newest == nil || b.Status.CompletedAt.After(newest.Status.CompletedAt.Time) ||
				(b.Status.CompletedAt.Equal(newest.Status.CompletedAt.Time) && b.Name > newest.Name) {
				newest = b
			}
		case BackupFailed:
		default:
			continue
		}
		finished = append(finished, b)
	}
	var out []*PostgresBackup
	for _, b := range finished {
		if b != newest && now.Sub(b.Status.CompletedAt.Time) > retention {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *PostgresBackup) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
