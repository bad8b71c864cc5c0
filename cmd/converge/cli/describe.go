package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/printers"
)

type describeOptions struct {
	selector string
}

func newDescribeCommand(g *globalOptions) *cobra.Command {
	o := &describeOptions{}
	cmd := &cobra.Command{
		Use:   "describe TYPE [NAME...] | TYPE/NAME...",
		Short: "Show an object in detail, with its recent Events",
		Long: `Show an object's metadata, spec and status, followed by the Events that
involve it (matched by name, namespace and uid). Without a name, every object
of the type in the namespace (filtered by -l) is described.`,
		Example: `  converge describe pod web-0
  converge describe deployment/web
  converge describe foos.samplecontroller.k8s.io -l app=demo`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runDescribe(cmd.Context(), g, o, args) },
	}
	cmd.Flags().StringVarP(&o.selector, "selector", "l", "", "label selector for the objects to describe")
	return cmd
}

func runDescribe(ctx context.Context, g *globalOptions, o *describeOptions, args []string) error {
	s, err := g.connect()
	if err != nil {
		return err
	}
	targets, err := s.resolveTargets(ctx, args)
	if err != nil {
		return err
	}
	var sel labels.Selector
	if o.selector != "" {
		if sel, err = labels.Parse(o.selector); err != nil {
			return fmt.Errorf("-l %q: %w", o.selector, err)
		}
	}
	eventsMapping, err := s.mapper.RESTMapping(ctx, api.GroupVersionKind{Version: "v1", Kind: "Event"})
	if err != nil {
		return s.explain(err)
	}
	failed := false
	var objs []*api.Unstructured
	for _, t := range targets {
		ns := s.objectNamespace(t.mapping, false)
		if len(t.names) == 0 {
			list := newList(t.mapping)
			opts := []client.ListOption{client.InNamespace(ns)}
			if sel != nil {
				opts = append(opts, client.MatchingLabelSelector{Selector: sel})
			}
			if err := s.client.List(ctx, list, opts...); err != nil {
				return s.explain(err)
			}
			for i := range list.Items {
				if list.Items[i].GroupVersionKind().Kind == "" {
					list.Items[i].SetGroupVersionKind(t.mapping.Kind)
				}
				objs = append(objs, &list.Items[i])
			}
			continue
		}
		for _, name := range t.names {
			u := newObject(t.mapping, ns, name)
			if err := s.client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				fmt.Fprintln(g.stderr, serverError(s.explain(err)))
				failed = true
				continue
			}
			objs = append(objs, u)
		}
	}
	if len(objs) == 0 && !failed {
		noResources(g, s, false, targets)
	}
	for i, u := range objs {
		if i > 0 {
			fmt.Fprintln(g.stdout)
		}
		events := newList(eventsMapping)
		err := s.client.List(ctx, events, client.InNamespace(u.GetNamespace()), client.MatchingFields{
			"involvedObject.name": u.GetName(), "involvedObject.namespace": u.GetNamespace(), "involvedObject.uid": u.GetUID(),
		})
		if err != nil {
			fmt.Fprintf(g.stderr, "cannot list the events of %s: %v\n", u.GetName(), err)
			events = nil
		}
		if err := describeObject(g.stdout, u, events, time.Now()); err != nil {
			return err
		}
	}
	if failed {
		return errSilent
	}
	return nil
}

// describeObject writes a kubectl-like description: metadata lines, the rest
// of the object as indented YAML, then the Events table.
func describeObject(w io.Writer, u *api.Unstructured, events *api.UnstructuredList, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 1, ' ', 0)
	field := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	field("Name", u.GetName())
	if u.GetNamespace() != "" {
		field("Namespace", u.GetNamespace())
	}
	field("Labels", mapLines(u.GetLabels()))
	field("Annotations", mapLines(u.GetAnnotations()))
	field("API Version", u.GroupVersionKind().APIVersion())
	field("Kind", u.GroupVersionKind().Kind)
	if ts := api.NestedString(u.Object, "metadata", "creationTimestamp"); ts != "" {
		field("Created", ts)
	}
	field("UID", u.GetUID())
	if refs := u.GetOwnerReferences(); len(refs) > 0 {
		var parts []string
		for _, r := range refs {
			parts = append(parts, r.Kind+"/"+r.Name)
		}
		field("Controlled By", strings.Join(parts, ", "))
	}
	if ts := api.NestedString(u.Object, "metadata", "deletionTimestamp"); ts != "" {
		field("Deleting Since", ts)
	}
	if f := u.GetFinalizers(); len(f) > 0 {
		field("Finalizers", strings.Join(f, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rest := map[string]any{}
	for k, v := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			rest[k] = v
		}
	}
	for _, k := range sortedKeys(rest) {
		fmt.Fprintf(w, "%s:\n", capitalize(k))
		var b strings.Builder
		if err := printers.YAML(&b, rest[k]); err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	return describeEvents(w, events, now)
}

func describeEvents(w io.Writer, events *api.UnstructuredList, now time.Time) error {
	if events == nil {
		return nil
	}
	if len(events.Items) == 0 {
		_, err := fmt.Fprintln(w, "Events:  <none>")
		return err
	}
	items := slices.Clone(events.Items)
	slices.SortStableFunc(items, func(a, b api.Unstructured) int { return eventTime(a).Compare(eventTime(b)) })
	fmt.Fprintln(w, "Events:")
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  Type\tReason\tAge\tFrom\tMessage")
	fmt.Fprintln(tw, "  ----\t------\t----\t----\t-------")
	for _, e := range items {
		from := api.NestedString(e.Object, "source", "component")
		if from == "" {
			from = api.NestedString(e.Object, "reportingComponent")
		}
		age := "<unknown>"
		if t := eventTime(e); !t.IsZero() {
			age = shortDuration(now.Sub(t))
		}
		if n, ok := api.NestedInt64(e.Object, "count"); ok && n > 1 {
			age += fmt.Sprintf(" (x%d)", n)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", api.NestedString(e.Object, "type"), api.NestedString(e.Object, "reason"),
			age, from, strings.TrimSpace(api.NestedString(e.Object, "message")))
	}
	return tw.Flush()
}

// eventTime is when an event last happened.
func eventTime(e api.Unstructured) time.Time {
	for _, path := range [][]string{{"lastTimestamp"}, {"eventTime"}, {"firstTimestamp"}, {"metadata", "creationTimestamp"}} {
		if s := api.NestedString(e.Object, path...); s != "" {
			for _, layout := range []string{time.RFC3339Nano, time.RFC3339} {
				if t, err := time.Parse(layout, s); err == nil {
					return t
				}
			}
		}
	}
	return time.Time{}
}

// shortDuration formats d like kubectl's ages: 45s, 3m, 5h, 2d.
func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func mapLines(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + m[k]
	}
	return strings.Join(lines, "\n\t")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
