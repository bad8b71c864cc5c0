package namespace

import (
	"context"

	"github.com/converge-dev/converge/framework/client/discovery"
	"github.com/converge-dev/converge/framework/client/rest"
)

// resource is one served collection this controller acts on.
type resource struct {
	discovery.Resource
}

// String renders "resource.group", as Kubernetes' namespace conditions do.
func (r resource) String() string {
	return r.GVR.Resource + "." + r.GVR.Group
}

// discoverResources returns the resources of every group's preferred version
// that support all of verbs (see discovery.PreferredResources).
func discoverResources(ctx context.Context, rc *rest.Client, verbs ...string) ([]resource, error) {
	rs, err := discovery.PreferredResources(ctx, rc, verbs...)
	out := make([]resource, len(rs))
	for i, r := range rs {
		out[i] = resource{r}
	}
	return out, err
}

// restDiscoverer discovers resources through the server's discovery API.
type restDiscoverer struct{ rc *rest.Client }

// Discover returns the preferred resources that support list and delete.
func (d restDiscoverer) Discover(ctx context.Context) ([]resource, error) {
	return discoverResources(ctx, d.rc, "list", "delete")
}
