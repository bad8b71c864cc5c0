// Package cronjob is the built-in CronJob controller (kube-controller-manager's
// cronjob controller v2 semantics, our own implementation).
//
// For every CronJob it:
//
//   - keeps status.active in line with the Jobs it owns (finished Jobs leave the
//     list with a SawCompletedJob event, vanished ones with MissingJob, running
//     ones it did not record join it with an UnexpectedJob warning;
//     lastSuccessfulTime follows the latest completed Job), and deletes the oldest finished Jobs beyond
//     successfulJobsHistoryLimit and failedJobsHistoryLimit;
//   - unless suspended, finds the most recent schedule time that is due (5-field
//     schedules and @hourly-style macros, evaluated in spec.timeZone, UTC when
//     unset) since lastScheduleTime (or creation), ignoring times older than
//     startingDeadlineSeconds; more than 100 missed times gives a
//     TooManyMissedTimes warning, as in Kubernetes;
//   - applies concurrencyPolicy (Allow; Forbid skips the run while a Job is
//     active; Replace deletes the active Jobs first), then creates the Job
//     "<cronjob>-<scheduled time in minutes since the epoch>" from the job
//     template with the batch.kubernetes.io/cronjob-scheduled-timestamp
//     annotation and a controller ownerReference;
//   - requeues itself at the next schedule time.
//
// Events use Kubernetes' reasons and messages: SuccessfulCreate ("Created job
// X"), SuccessfulDelete ("Deleted job X"), FailedCreate, FailedDelete,
// JobAlreadyActive, SawCompletedJob, MissingJob, UnexpectedJob,
// TooManyMissedTimes, UnparseableSchedule and UnknownTimeZone. (Kubernetes'
// MissSchedule cannot happen here, as there: due times older than
// startingDeadlineSeconds are never considered.)
//
// The clock is Options.Now, so tests drive time instead of waiting. The
// reconciler is level-based: each run recomputes everything from the CronJob,
// its Jobs and the clock.
package cronjob
