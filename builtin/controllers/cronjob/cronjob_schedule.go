package cronjob

import (
	"fmt"
	"time"

	batchv1 "github.com/converge-dev/converge/builtin/api/batch/v1"
)

// tooManyMissed is the number of missed schedule times beyond which the
// controller warns (Kubernetes' limit).
const tooManyMissed = 100

// maxScan bounds the schedule times examined in one reconcile.
const maxScan = 1_000_000

// schedule is a parsed spec.schedule in its time zone.
type schedule struct {
	s   *batchv1.Schedule
	loc *time.Location
}

// parseSchedule reads the CronJob's schedule and time zone. A TZ= or
// CRON_TZ= prefix in the schedule is honoured like Kubernetes does.
func parseSchedule(cj *batchv1.CronJob) (schedule, error) {
	spec := cj.Spec.Schedule
	loc := time.UTC
	if cj.Spec.TimeZone != nil {
		l, err := time.LoadLocation(*cj.Spec.TimeZone)
		if err != nil {
			return schedule{}, fmt.Errorf("unknown time zone %q: %w", *cj.Spec.TimeZone, err)
		}
		loc = l
	}
	s, err := batchv1.ParseSchedule(spec)
	if err != nil {
		return schedule{}, fmt.Errorf("unparseable schedule %q: %w", spec, err)
	}
	return schedule{s: s, loc: loc}, nil
}

// next is the first schedule time strictly after t.
func (s schedule) next(t time.Time) time.Time { return s.s.Next(t.In(s.loc)) }

// mostRecent returns the latest schedule time in (earliest, now] and how many
// schedule times fell in that range (at most maxScan are examined).
func (s schedule) mostRecent(earliest, now time.Time) (latest time.Time, missed int) {
	t := s.next(earliest)
	for i := 0; i < maxScan && !t.IsZero() && !t.After(now); i++ {
		latest = t
		missed++
		t = s.next(t)
	}
	return latest, missed
}

// earliestTime is where to start looking for missed schedule times.
func earliestTime(cj *batchv1.CronJob, now time.Time) time.Time {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil {
		if sd := now.Add(-time.Duration(*d) * time.Second); sd.After(earliest) {
			earliest = sd
		}
	}
	return earliest
}

// jobName is the name of the Job for scheduledTime: the CronJob's name and the
// scheduled time in minutes since the epoch.
func jobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}
