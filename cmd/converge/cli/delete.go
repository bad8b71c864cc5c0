package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/printers"
	"github.com/converge-dev/converge/framework/client/resource"
	"github.com/converge-dev/converge/framework/client/restmapper"
)

type deleteOptions struct {
	files          []string
	recursive      bool
	selector       string
	all            bool
	cascade        string
	wait           bool
	timeout        time.Duration
	ignoreNotFound bool
}

func newDeleteCommand(g *globalOptions) *cobra.Command {
	o := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete TYPE NAME... | TYPE/NAME... | TYPE -l SELECTOR | TYPE --all | -f FILE",
		Short: "Delete objects by name, label selector, or manifest",
		Long: `Delete objects and, by default, wait until they are gone (objects with
finalizers stay until their finalizers are removed).

--cascade decides what happens to the objects they own:
  background  delete the owner now; the garbage collector deletes dependents (default)
  foreground  dependents are deleted first; the owner goes last
  orphan      dependents are kept, without the owner reference`,
		Example: `  converge delete configmap settings
  converge delete deployment/web --cascade=foreground
  converge delete pods -l app=web --wait=false
  converge delete -f app.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error { return runDelete(cmd.Context(), g, o, args) },
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.files, "filename", "f", nil, "delete the objects of these manifests (file, directory or -)")
	f.BoolVarP(&o.recursive, "recursive", "R", false, "also read the subdirectories of directories given with -f")
	f.StringVarP(&o.selector, "selector", "l", "", "delete the objects matching this label selector")
	f.BoolVar(&o.all, "all", false, "delete every object of the type in the namespace")
	f.StringVar(&o.cascade, "cascade", "background", "what happens to dependents: background, foreground or orphan")
	f.BoolVar(&o.wait, "wait", true, "wait until the objects are gone")
	f.DurationVar(&o.timeout, "timeout", time.Minute, "how long to wait with --wait")
	f.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "treat objects that do not exist as deleted")
	return cmd
}

func runDelete(ctx context.Context, g *globalOptions, o *deleteOptions, args []string) error {
	var policy string
	switch o.cascade {
	case "background", "true":
		policy = api.DeletePropagationBackground
	case "foreground":
		policy = api.DeletePropagationForeground
	case "orphan", "false":
		policy = api.DeletePropagationOrphan
	default:
		return fmt.Errorf("--cascade must be background, foreground or orphan, not %q", o.cascade)
	}
	var sel labels.Selector
	if o.selector != "" {
		var err error
		if sel, err = labels.Parse(o.selector); err != nil {
			return fmt.Errorf("-l %q: %w", o.selector, err)
		}
	}
	if len(o.files) > 0 && len(args) > 0 {
		return errors.New("give either -f or TYPE NAME arguments, not both")
	}
	s, err := g.connect()
	if err != nil {
		return err
	}
	objs, err := deleteTargets(ctx, s, g.stdin, o, sel, args)
	if err != nil {
		return err
	}
	failed := false
	type deleted struct {
		obj  *api.Unstructured
		kind string
	}
	var gone []deleted
	for _, u := range objs {
		kind := printers.ResourceName(u.GroupVersionKind())
		err := s.client.Delete(ctx, u, client.PropagationPolicy(policy))
		switch {
		case apierrors.IsNotFound(err) && o.ignoreNotFound:
			continue
		case err != nil:
			fmt.Fprintln(g.stderr, serverError(s.explain(err)))
			failed = true
			continue
		}
		fmt.Fprintf(g.stdout, "%s \"%s\" deleted\n", kind, u.GetName())
		gone = append(gone, deleted{u, kind})
	}
	if o.wait && len(gone) > 0 {
		wctx, cancel := context.WithTimeout(ctx, o.timeout)
		defer cancel()
		line := g.newStatusLine()
		for _, d := range gone {
			state, err := waitOne(wctx, s, d.obj, waitCondition{delete: true}, func(state string) {
				line.Update(fmt.Sprintf("waiting for %s/%s to be deleted (%s)", d.kind, d.obj.GetName(), state))
			})
			if err != nil {
				line.Done()
				if errors.Is(err, context.DeadlineExceeded) {
					return fmt.Errorf("timed out after %s waiting for %s/%s to be deleted (last seen: %s): its finalizers must be removed by their controllers; pass --wait=false not to wait",
						o.timeout, d.kind, d.obj.GetName(), state)
				}
				return s.explain(err)
			}
		}
		line.Done()
	}
	if failed {
		return errSilent
	}
	return nil
}

// deleteTargets lists the objects to delete.
func deleteTargets(ctx context.Context, s *session, stdin io.Reader, o *deleteOptions, sel labels.Selector, args []string) ([]*api.Unstructured, error) {
	if len(o.files) > 0 {
		read, err := resource.Read(resource.Options{Paths: o.files, Recursive: o.recursive, Stdin: stdin})
		if err != nil {
			return nil, err
		}
		var out []*api.Unstructured
		for _, r := range read {
			u := r.Object
			m, err := s.mapper.RESTMapping(ctx, u.GroupVersionKind())
			if err != nil {
				return nil, s.explain(err)
			}
			if m.Namespaced && u.GetNamespace() == "" {
				u.SetNamespace(s.namespace)
			}
			out = append(out, u)
		}
		return out, nil
	}
	targets, err := s.resolveTargets(ctx, args)
	if err != nil {
		return nil, err
	}
	var out []*api.Unstructured
	for _, t := range targets {
		ns := s.objectNamespace(t.mapping, false)
		if len(t.names) > 0 {
			for _, n := range t.names {
				out = append(out, newObject(t.mapping, ns, n))
			}
			continue
		}
		if sel == nil && !o.all {
			return nil, fmt.Errorf("say which %s to delete: give names, -l SELECTOR, or --all", groupResource(t.mapping))
		}
		items, err := listObjects(ctx, s, t.mapping, ns, sel)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// listObjects lists m's objects in ns matching sel (nil: all).
func listObjects(ctx context.Context, s *session, m *restmapper.Mapping, ns string, sel labels.Selector) ([]*api.Unstructured, error) {
	list := newList(m)
	opts := []client.ListOption{client.InNamespace(ns)}
	if sel != nil {
		opts = append(opts, client.MatchingLabelSelector{Selector: sel})
	}
	if err := s.client.List(ctx, list, opts...); err != nil {
		return nil, s.explain(err)
	}
	out := make([]*api.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		it := &list.Items[i]
		if it.GroupVersionKind().Kind == "" {
			it.SetGroupVersionKind(m.Kind)
		}
		out = append(out, it)
	}
	return out, nil
}
