// Package v1 holds the batch/v1 kinds, Job and CronJob: Go types with
// Kubernetes' JSON, protobuf and strategic-merge-patch tags, their defaults
// (including the pod defaults of every template), the server-generated Job
// selector (PrepareJobForCreate, run on create by the jobs strategy's
// PrepareForCreate), validation, a five-field cron schedule parser
// (ParseSchedule) and registration with the API server.
package v1
