package resourcequota

import (
	"context"
	"fmt"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/restmapper"
)

// serverLister lists any resource from the server, finding its served
// version through discovery.
type serverLister struct {
	c      *client.Client
	mapper *restmapper.Mapper
}

// List returns the namespace's objects of gr; none when gr is not served.
func (s serverLister) List(ctx context.Context, gr api.GroupResource, namespace string) ([]map[string]any, error) {
	name := gr.Resource
	if gr.Group != "" {
		name += "." + gr.Group
	}
	m, err := s.mapper.ResourceFor(ctx, name)
	if restmapper.IsNoMatch(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find resource %s: %w", name, err)
	}
	if m.Resource.Group != gr.Group || m.Resource.Resource != gr.Resource {
		return nil, nil // a short name or singular of something else
	}
	l := &api.UnstructuredList{APIVersion: m.Kind.GroupVersion().String(), Kind: m.Kind.Kind + "List"}
	err = s.c.List(ctx, l, client.InNamespace(namespace))
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", name, err)
	}
	out := make([]map[string]any, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, l.Items[i].Object)
	}
	return out, nil
}
