package garbagecollector

import (
	"context"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client/discovery"
	"github.com/converge-dev/converge/framework/client/rest"
)

// resource is one served collection this controller acts on.
type resource struct {
	discovery.Resource
}

// String renders "resource.group/version".
func (r resource) String() string {
	return r.GVR.Resource + "." + r.GVR.Group + "/" + r.GVR.Version
}

// ignored are the resources the collector never monitors, as Kubernetes'
// DefaultIgnoredResources: events (core/v1 and events.k8s.io/v1 are one
// resource; neither owns anything nor is owned in practice, and they are the
// busiest kind).
var ignored = map[api.GroupResource]bool{
	{Group: "", Resource: "events"}:              true,
	{Group: "events.k8s.io", Resource: "events"}: true,
}

// discoverResources returns the resources of every group's preferred version
// that support all of verbs (see discovery.PreferredResources), less the
// ignored ones.
func discoverResources(ctx context.Context, rc *rest.Client, verbs ...string) ([]resource, error) {
	rs, err := discovery.PreferredResources(ctx, rc, verbs...)
	out := make([]resource, 0, len(rs))
	for _, r := range rs {
		if !ignored[r.GVR.GroupResource()] {
			out = append(out, resource{r})
		}
	}
	return out, err
}
