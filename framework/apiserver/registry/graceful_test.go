package registry

import (
	"testing"
	"time"
)

func TestBeforeDelete(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) *time.Time { ts := now.Add(d); return &ts }
	i := func(v int64) *int64 { return &v }
	// marked30 was deleted 10 s ago with a grace of 30 s.
	marked30 := DeletionMark{Timestamp: at(20 * time.Second), GracePeriodSeconds: i(30)}
	for _, tc := range []struct {
		name      string
		cur       DeletionMark
		grace     int64
		requested *int64
		action    GraceAction
		ts        *time.Time
		period    *int64
	}{
		{name: "first delete with a grace marks", grace: 30, action: GraceMark, ts: at(30 * time.Second), period: i(30)},
		{name: "first delete without grace deletes", grace: 0, action: GraceDeleteNow},
		{name: "negative grace counts as one second", grace: -5, action: GraceMark, ts: at(time.Second), period: i(1)},
		{name: "second delete without a grace is pending", cur: marked30, grace: 30, action: GracePending},
		{name: "a longer grace is ignored", cur: marked30, requested: i(60), action: GracePending},
		{name: "the same grace is ignored", cur: marked30, requested: i(30), action: GracePending},
		{name: "a shorter grace moves the deadline", cur: marked30, requested: i(15),
			action: GraceMark, ts: at(5 * time.Second), period: i(15)},
		{name: "a shorter grace may end in the past", cur: marked30, requested: i(5),
			action: GraceMark, ts: at(-5 * time.Second), period: i(5)},
		{name: "a zero grace ends now", cur: DeletionMark{Timestamp: at(30 * time.Second), GracePeriodSeconds: i(30)}, requested: i(0),
			action: GraceMark, ts: at(0), period: i(0)},
		{name: "a negative requested grace counts as one second", cur: marked30, requested: i(-1),
			action: GraceMark, ts: at(-9 * time.Second), period: i(1)},
		{name: "marked by finalizers: delete now", cur: DeletionMark{Timestamp: at(0), GracePeriodSeconds: i(0)}, requested: i(10),
			action: GraceDeleteNow},
		{name: "marked without a grace period: delete now", cur: DeletionMark{Timestamp: at(0)}, action: GraceDeleteNow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			action, mark := BeforeDelete(tc.cur, tc.grace, tc.requested, now)
			if action != tc.action {
				t.Fatalf("action = %v, want %v", action, tc.action)
			}
			if action != GraceMark {
				return
			}
			if mark.Timestamp == nil || !mark.Timestamp.Equal(*tc.ts) {
				t.Errorf("deletionTimestamp = %v, want %v", mark.Timestamp, *tc.ts)
			}
			if mark.GracePeriodSeconds == nil || *mark.GracePeriodSeconds != *tc.period {
				t.Errorf("deletionGracePeriodSeconds = %v, want %d", mark.GracePeriodSeconds, *tc.period)
			}
		})
	}
}
