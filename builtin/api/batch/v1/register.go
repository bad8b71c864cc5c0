package v1

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/apiserver/registry"
)

// Resources returns the batch/v1 resources.
func Resources() []*registry.Resource {
	return []*registry.Resource{
		{
			GroupVersion: GroupVersion, Resource: "jobs", Kind: "Job", ListKind: "JobList", Singular: "job",
			Categories: []string{"all"}, Namespaced: true,
			Strategy:          JobStrategy(),
			StatusSubresource: true, StatusUpdatesMetadata: true, Generation: true, Type: reflect.TypeFor[Job](),
			SelectableFields: func(obj map[string]any) map[string]string {
				n, _ := api.NestedInt64(obj, "status", "succeeded")
				return map[string]string{"status.successful": fmt.Sprint(n)}
			},
			Printer: jobPrinter(),
		},
		{
			GroupVersion: GroupVersion, Resource: "cronjobs", Kind: "CronJob", ListKind: "CronJobList", Singular: "cronjob",
			ShortNames: []string{"cj"}, Categories: []string{"all"}, Namespaced: true,
			Strategy:          registry.Typed[CronJob]{Default: DefaultCronJob, Validate: ValidateCronJob},
			StatusSubresource: true, StatusUpdatesMetadata: true, Generation: true, Type: reflect.TypeFor[CronJob](),
			Printer: cronJobPrinter(),
		},
	}
}

// jobStrategy is the jobs strategy: the typed Job strategy plus a create
// preparation that generates the selector and the template labels.
type jobStrategy struct {
	registry.Typed[Job]
}

var (
	_ registry.Strategy        = jobStrategy{}
	_ registry.Preparer        = jobStrategy{}
	_ registry.StatusValidator = jobStrategy{}
)

// JobStrategy returns the strategy of the jobs resource. Its PrepareForCreate
// runs PrepareJobForCreate with metadata.uid, which the server assigns before
// calling it; ValidateJob then requires what it generated. Writes through
// jobs/status are checked by ValidateJobStatusUpdate alone, as Kubernetes' job
// status strategy does.
func JobStrategy() registry.Strategy {
	return jobStrategy{registry.Typed[Job]{Default: DefaultJob, Validate: ValidateJob, ValidateUpdateFunc: ValidateJobUpdate,
		ValidateStatusUpdateFunc: ValidateJobStatusUpdate}}
}

// PrepareForCreate implements registry.Preparer. obj is replaced in place. An
// object that does not decode is left alone for ValidateCreate to report.
func (jobStrategy) PrepareForCreate(obj map[string]any) {
	job, err := registry.FromMap[Job](obj)
	if err != nil {
		return
	}
	PrepareJobForCreate(job, job.UID)
	out, err := registry.ToMap(job)
	if err != nil {
		return
	}
	clear(obj)
	maps.Copy(obj, out)
}

// PrepareForUpdate implements registry.Preparer; updates need no preparation.
func (jobStrategy) PrepareForUpdate(_, _ map[string]any) {}

const (
	descName = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically."
	descAge  = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC."
)

func wideCols() []registry.Column {
	return []registry.Column{
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: "A label query over pods that should match the pod count."},
	}
}

// formatSelector is kubectl's metav1.FormatLabelSelector: "<none>" when empty.
func formatSelector(sel *api.LabelSelector) string {
	if s := labels.FormatLabelSelector(sel); s != "" {
		return s
	}
	return "<none>"
}

// containerCells is kubectl's layoutContainerCells.
func containerCells(cs []corev1.Container) (string, string) {
	names := make([]string, len(cs))
	images := make([]string, len(cs))
	for i, c := range cs {
		names[i], images[i] = c.Name, c.Image
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

func jobPrinter() *registry.Printer {
	cols := []registry.Column{
		{Name: "Name", Type: "string", Format: "name", Description: descName},
		{Name: "Status", Type: "string", Description: "Status of the job."},
		{Name: "Completions", Type: "string", Description: "The number of successfully completed pods out of the desired completions."},
		{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		{Name: "Age", Type: "string", Description: descAge},
	}
	return &registry.Printer{
		Columns: append(cols, wideCols()...),
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			j, err := registry.FromMap[Job](obj)
			if err != nil {
				return nil, fmt.Errorf("decode job: %w", err)
			}
			return jobRow(j, now), nil
		},
	}
}

func hasCondition(j *Job, t JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// JobStatusText is the STATUS column of a Job as kubectl shows it.
func JobStatusText(j *Job) string {
	switch {
	case hasCondition(j, JobComplete):
		return "Complete"
	case hasCondition(j, JobFailed):
		return "Failed"
	case j.DeletionTimestamp != nil:
		return "Terminating"
	case hasCondition(j, JobSuspended):
		return "Suspended"
	case hasCondition(j, JobFailureTarget):
		return "FailureTarget"
	case hasCondition(j, JobSuccessCriteriaMet):
		return "SuccessCriteriaMet"
	}
	return "Running"
}

func jobRow(j *Job, now time.Time) []any {
	var completions string
	switch {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	var duration string
	switch {
	case j.Status.StartTime == nil:
	case j.Status.CompletionTime == nil:
		duration = registry.HumanDuration(now.Sub(j.Status.StartTime.Time))
	default:
		duration = registry.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return []any{j.Name, JobStatusText(j), completions, duration, registry.Age(j.CreationTimestamp, now),
		names, images, formatSelector(j.Spec.Selector)}
}

func cronJobPrinter() *registry.Printer {
	cols := []registry.Column{
		{Name: "Name", Type: "string", Format: "name", Description: descName},
		{Name: "Schedule", Type: "string", Description: "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."},
		{Name: "Timezone", Type: "string", Description: "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones."},
		{Name: "Suspend", Type: "boolean", Description: "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false."},
		{Name: "Active", Type: "integer", Description: "A list of pointers to currently running jobs."},
		{Name: "Last Schedule", Type: "string", Description: "Information when was the last time the job was successfully scheduled."},
		{Name: "Age", Type: "string", Description: descAge},
	}
	return &registry.Printer{
		Columns: append(cols, wideCols()...),
		Row: func(obj map[string]any, now time.Time) ([]any, error) {
			c, err := registry.FromMap[CronJob](obj)
			if err != nil {
				return nil, fmt.Errorf("decode cronjob: %w", err)
			}
			last := "<none>"
			if c.Status.LastScheduleTime != nil {
				last = registry.Age(*c.Status.LastScheduleTime, now)
			}
			tz := "<none>"
			if c.Spec.TimeZone != nil {
				tz = *c.Spec.TimeZone
			}
			suspend := "<unset>"
			if c.Spec.Suspend != nil {
				suspend = "False"
				if *c.Spec.Suspend {
					suspend = "True"
				}
			}
			names, images := containerCells(c.Spec.JobTemplate.Spec.Template.Spec.Containers)
			return []any{c.Name, c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last,
				registry.Age(c.CreationTimestamp, now), names, images, formatSelector(c.Spec.JobTemplate.Spec.Selector)}, nil
		},
	}
}
