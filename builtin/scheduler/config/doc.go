// Package config is the scheduler's configuration file, shaped like
// kube-scheduler's KubeSchedulerConfiguration: profiles (one per
// schedulerName) with plugins enabled/disabled per extension point, score
// weights and per-plugin args, plus percentageOfNodesToScore and parallelism.
//
// Defaults follow Kubernetes: one profile "default-scheduler" running the
// default plugin set (multiPoint); per-extension-point "enabled" lists add
// plugins (or re-weight them) and "disabled" lists remove them ("*" removes
// all defaults of that extension point).
package config
