package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/rest"
	"github.com/converge-dev/converge/framework/client/restmapper"
)

// errSilent makes Execute exit 1 without printing: the command already reported
// its errors (one per object) on stderr.
var errSilent = errors.New("errors were reported")

// session is what a command needs to talk to the API server.
type session struct {
	cfg *rest.Config
	// namespace is -n, else the context's namespace, else "default".
	namespace string
	// explicitNamespace is true when -n was given.
	explicitNamespace bool
	rest              *rest.Client
	mapper            *restmapper.Mapper
	client            *client.Client
	tables            *tableClient
}

// connect loads the kubeconfig and builds the clients.
func (g *globalOptions) connect() (*session, error) {
	env := kubeconfig.DefaultEnvironment()
	env.Getenv = g.getenv
	cfg, ns, err := env.Load(g.kubeconfig, g.context)
	if err != nil {
		return nil, fmt.Errorf("%w\nStart a control plane with `converge up` and export the KUBECONFIG it prints, or pass --kubeconfig", err)
	}
	rc, err := rest.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	tc := &tableClient{rest: rc}
	mapper := restmapper.New(rc, restmapper.Options{})
	s := &session{cfg: cfg, namespace: ns, rest: rc, mapper: mapper, tables: tc,
		client: client.NewForREST(rc, client.Options{Mapper: mapper})}
	if g.namespace != "" {
		s.namespace, s.explicitNamespace = g.namespace, true
	}
	if s.namespace == "" {
		s.namespace = kubeconfig.DefaultNamespace
	}
	return s, nil
}

// explain adds what to do next to errors whose cause the user can act on.
func (s *session) explain(err error) error {
	if err == nil {
		return nil
	}
	var opErr *net.OpError
	var uErr *url.Error
	if errors.As(err, &opErr) || errors.As(err, &uErr) {
		return fmt.Errorf("%w\nIs the API server at %s running? Check with `converge status`, or start one with `converge up`", err, s.cfg.Host)
	}
	var nr *restmapper.NoResourceMatchError
	if errors.As(err, &nr) {
		return fmt.Errorf("%w\nThe server does not know the resource type %q. If it is a custom resource, apply its CustomResourceDefinition first", err, nr.Name)
	}
	var nk *restmapper.NoKindMatchError
	if errors.As(err, &nk) {
		return fmt.Errorf("%w\nNo resource serves kind %s. If it is a custom resource, apply its CustomResourceDefinition first", err, nk.Kind)
	}
	return err
}

// serverError formats err like kubectl: "Error from server (Reason): message".
func serverError(err error) string {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		reason := se.ErrStatus.Reason
		if reason == "" {
			reason = fmt.Sprintf("HTTP %d", se.ErrStatus.Code)
		}
		return fmt.Sprintf("Error from server (%s): %s", reason, se.ErrStatus.Message)
	}
	return "Error: " + err.Error()
}

// target is one resource type named on the command line and the objects of it.
type target struct {
	mapping *restmapper.Mapping
	names   []string // empty: every object (subject to selectors)
}

// resolveTargets reads "TYPE [NAME...]", "TYPE1,TYPE2" and "TYPE/NAME ..."
// arguments the way kubectl does.
func (s *session) resolveTargets(ctx context.Context, args []string) ([]target, error) {
	if len(args) == 0 {
		return nil, errors.New("you must specify the type of resource: e.g. `pods`, `deployments.apps`, `foos.samplecontroller.k8s.io`")
	}
	if strings.Contains(args[0], "/") {
		var out []target
		for _, a := range args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok || typ == "" || name == "" {
				return nil, fmt.Errorf("%q is not TYPE/NAME: when one argument is TYPE/NAME, all must be", a)
			}
			m, err := s.mapper.ResourceFor(ctx, typ)
			if err != nil {
				return nil, s.explain(err)
			}
			out = append(out, target{mapping: m, names: []string{name}})
		}
		return out, nil
	}
	types := strings.Split(args[0], ",")
	if len(types) > 1 && len(args) > 1 {
		return nil, errors.New("names can only be given with one resource type; use TYPE/NAME for several types")
	}
	var out []target
	for _, typ := range types {
		m, err := s.mapper.ResourceFor(ctx, typ)
		if err != nil {
			return nil, s.explain(err)
		}
		out = append(out, target{mapping: m, names: args[1:]})
	}
	return out, nil
}

// objectNamespace returns the namespace a request for m uses ("" for
// cluster-scoped resources and for all namespaces).
func (s *session) objectNamespace(m *restmapper.Mapping, allNamespaces bool) string {
	if !m.Namespaced || allNamespaces {
		return ""
	}
	return s.namespace
}

// resourcePath is /api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB...]].
func resourcePath(m *restmapper.Mapping, namespace, name string, sub ...string) string {
	gvr := m.Resource
	var b strings.Builder
	if gvr.Group == "" {
		b.WriteString("/api/" + gvr.Version)
	} else {
		b.WriteString("/apis/" + gvr.Group + "/" + gvr.Version)
	}
	if m.Namespaced && namespace != "" {
		b.WriteString("/namespaces/" + url.PathEscape(namespace))
	}
	b.WriteString("/" + gvr.Resource)
	if name != "" {
		b.WriteString("/" + url.PathEscape(name))
	}
	for _, x := range sub {
		b.WriteString("/" + x)
	}
	return b.String()
}

// newObject returns an empty Unstructured of m's kind named name in namespace.
func newObject(m *restmapper.Mapping, namespace, name string) *api.Unstructured {
	u := &api.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(m.Kind)
	u.SetName(name)
	if m.Namespaced {
		u.SetNamespace(namespace)
	}
	return u
}

// newList returns an empty UnstructuredList of m's kind.
func newList(m *restmapper.Mapping) *api.UnstructuredList {
	return &api.UnstructuredList{APIVersion: m.Kind.GroupVersion().String(), Kind: m.Kind.Kind + "List"}
}

// groupResource is "deployments.apps" or "configmaps", as kubectl names it in messages.
func groupResource(m *restmapper.Mapping) string {
	if m.Resource.Group == "" {
		return m.Resource.Resource
	}
	return m.Resource.Resource + "." + m.Resource.Group
}
