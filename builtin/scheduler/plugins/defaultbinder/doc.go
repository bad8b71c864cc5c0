// Package defaultbinder is the DefaultBinder plugin: it binds a pod by
// creating its pods/binding subresource, which sets spec.nodeName and the
// PodScheduled condition on the API server.
package defaultbinder
