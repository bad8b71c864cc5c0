package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/printers"
)

type getOptions struct {
	output        string
	selector      string
	watch         bool
	allNamespaces bool
	noHeaders     bool
}

func newGetCommand(g *globalOptions) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME...] | TYPE/NAME...",
		Short: "List objects, or show some by name",
		Long: `Print objects as a table with the columns the server defines for their type
(the same table kubectl prints), or as YAML, JSON, names or a JSONPath template.
TYPE is a plural, singular or short name, optionally with its group:
pods, pod, po, deployments.apps, foos.samplecontroller.k8s.io.

-o wide adds the columns the server marks as secondary. -o json and -o yaml
print one object when exactly one was named, otherwise a v1 List; this output
is stable for scripts.`,
		Example: `  # Pods of the current namespace, and of every namespace
  converge get pods
  converge get pods -A

  # Some objects by name, in several output formats
  converge get deployment web -o yaml
  converge get configmaps,secrets -o name
  converge get pods -l app=web -o wide
  converge get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'

  # Keep printing changes until Ctrl-C
  converge get pods -w`,
		RunE: func(cmd *cobra.Command, args []string) error { return runGet(cmd.Context(), g, o, args) },
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "output format: wide, yaml, json, name or jsonpath=TEMPLATE (default: table)")
	f.StringVarP(&o.selector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	f.BoolVarP(&o.watch, "watch", "w", false, "after printing, keep printing changes until interrupted")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list objects of every namespace")
	f.BoolVar(&o.noHeaders, "no-headers", false, "omit the table header")
	return cmd
}

// outputFormat is a parsed -o value.
type outputFormat struct {
	kind     string // "table", "wide", "yaml", "json", "name", "jsonpath"
	jsonpath *printers.JSONPath
}

func parseOutput(o string) (outputFormat, error) {
	switch o {
	case "":
		return outputFormat{kind: "table"}, nil
	case "wide", "yaml", "json", "name":
		return outputFormat{kind: o}, nil
	}
	if tmpl, ok := strings.CutPrefix(o, "jsonpath="); ok {
		jp, err := printers.ParseJSONPath(tmpl)
		if err != nil {
			return outputFormat{}, err
		}
		return outputFormat{kind: "jsonpath", jsonpath: jp}, nil
	}
	return outputFormat{}, fmt.Errorf("unknown output format %q: use wide, yaml, json, name or jsonpath=TEMPLATE", o)
}

func runGet(ctx context.Context, g *globalOptions, o *getOptions, args []string) error {
	out, err := parseOutput(o.output)
	if err != nil {
		return err
	}
	var sel labels.Selector
	if o.selector != "" {
		if sel, err = labels.Parse(o.selector); err != nil {
			return fmt.Errorf("-l %q: %w", o.selector, err)
		}
	}
	s, err := g.connect()
	if err != nil {
		return err
	}
	targets, err := s.resolveTargets(ctx, args)
	if err != nil {
		return err
	}
	if o.watch && (len(targets) != 1 || len(targets[0].names) > 1) {
		return errors.New("-w watches one resource type (and at most one name); run one `get -w` per type")
	}
	if out.kind == "table" || out.kind == "wide" {
		return getTables(ctx, g, s, o, out, targets)
	}
	return getObjects(ctx, g, s, o, out, sel, targets)
}

// getTables prints the server's Tables for the targets.
func getTables(ctx context.Context, g *globalOptions, s *session, o *getOptions, out outputFormat, targets []target) error {
	failed := false
	printed := 0
	for ti, t := range targets {
		ns := s.objectNamespace(t.mapping, o.allNamespaces)
		opts := printers.TableOptions{Wide: out.kind == "wide", NoHeaders: o.noHeaders,
			WithNamespace: o.allNamespaces && t.mapping.Namespaced}
		if len(targets) > 1 {
			opts.KindPrefix = printers.ResourceName(t.mapping.Kind)
		}
		p := printers.NewTablePrinter(opts)
		q := url.Values{}
		if o.selector != "" {
			q.Set("labelSelector", o.selector)
		}
		var tables []*printers.Table
		if len(t.names) == 0 {
			tb, err := s.tables.get(ctx, resourcePath(t.mapping, ns, ""), q)
			if err != nil {
				return s.explain(err)
			}
			tables = append(tables, tb)
		}
		for _, name := range t.names {
			tb, err := s.tables.get(ctx, resourcePath(t.mapping, ns, name), nil)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				fmt.Fprintln(g.stderr, serverError(s.explain(err)))
				failed = true
				continue
			}
			tables = append(tables, tb)
		}
		rows := 0
		merged := &printers.Table{}
		for _, tb := range tables {
			if len(merged.ColumnDefinitions) == 0 {
				merged.ColumnDefinitions = tb.ColumnDefinitions
			}
			merged.Rows = append(merged.Rows, tb.Rows...)
			rows += len(tb.Rows)
		}
		if rows > 0 && printed > 0 && ti > 0 {
			fmt.Fprintln(g.stdout)
		}
		if err := p.Print(g.stdout, merged); err != nil {
			return err
		}
		printed += rows
		if o.watch {
			rv := ""
			if len(tables) > 0 {
				rv = tables[0].Metadata.ResourceVersion
			}
			return watchTable(ctx, s, p, g.stdout, t, ns, o.selector, rv)
		}
	}
	if printed == 0 && !failed {
		noResources(g, s, o.allNamespaces, targets)
	}
	if failed {
		return errSilent
	}
	return nil
}

func noResources(g *globalOptions, s *session, all bool, targets []target) {
	if all || !targets[0].mapping.Namespaced {
		fmt.Fprintln(g.stderr, "No resources found")
		return
	}
	fmt.Fprintf(g.stderr, "No resources found in %s namespace.\n", s.namespace)
}

// watchTable streams Table watch events until ctx ends.
func watchTable(ctx context.Context, s *session, p *printers.TablePrinter, w io.Writer, t target, ns, selector, rv string) error {
	q := url.Values{"watch": {"true"}}
	if rv != "" {
		q.Set("resourceVersion", rv)
	}
	if selector != "" {
		q.Set("labelSelector", selector)
	}
	if len(t.names) == 1 {
		q.Set("fieldSelector", "metadata.name="+t.names[0])
	}
	body, err := s.tables.open(ctx, resourcePath(t.mapping, ns, ""), q)
	if err != nil {
		return s.explain(err)
	}
	defer body.Close()
	go func() { <-ctx.Done(); body.Close() }()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("decode watch event: %w", err)
		}
		switch ev.Type {
		case "BOOKMARK":
			continue
		case "ERROR":
			var st api.Status
			_ = json.Unmarshal(ev.Object, &st)
			return fmt.Errorf("watch ended by the server: %s; run the command again", st.Message)
		}
		tb, err := printers.DecodeTable(ev.Object)
		if err != nil {
			return err
		}
		if err := p.Print(w, tb); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil // interrupted: the normal way to stop a watch
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	return nil
}

// getObjects prints full objects (yaml, json, name, jsonpath).
func getObjects(ctx context.Context, g *globalOptions, s *session, o *getOptions, out outputFormat, sel labels.Selector, targets []target) error {
	var objs []*api.Unstructured
	single := len(targets) == 1 && len(targets[0].names) == 1
	failed := false
	var listRV string
	for _, t := range targets {
		ns := s.objectNamespace(t.mapping, o.allNamespaces)
		if len(t.names) == 0 {
			list := newList(t.mapping)
			opts := []client.ListOption{client.InNamespace(ns)}
			if sel != nil {
				opts = append(opts, client.MatchingLabelSelector{Selector: sel})
			}
			if err := s.client.List(ctx, list, opts...); err != nil {
				return s.explain(err)
			}
			listRV = list.Metadata.ResourceVersion
			for i := range list.Items {
				it := &list.Items[i]
				if it.GroupVersionKind().Kind == "" {
					it.SetGroupVersionKind(t.mapping.Kind)
				}
				objs = append(objs, it)
			}
			continue
		}
		for _, name := range t.names {
			u := newObject(t.mapping, ns, name)
			if err := s.client.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				fmt.Fprintln(g.stderr, serverError(s.explain(err)))
				failed = true
				continue
			}
			objs = append(objs, u)
		}
	}
	switch {
	case out.kind == "name":
		for _, u := range objs {
			if err := printers.Name(g.stdout, u); err != nil {
				return err
			}
		}
		if len(objs) == 0 && !failed && !o.watch {
			noResources(g, s, o.allNamespaces, targets)
		}
	case single && len(objs) == 1:
		if err := printAny(g.stdout, out, objs[0].Object); err != nil {
			return err
		}
	case single || (len(objs) == 0 && o.watch):
		// the named object was not found (reported above), or a watch will print
	default:
		if err := printAny(g.stdout, out, printers.List(objs)); err != nil {
			return err
		}
	}
	if o.watch {
		t := targets[0]
		opts := []client.ListOption{client.InNamespace(s.objectNamespace(t.mapping, o.allNamespaces)), client.ResourceVersion(listRV)}
		if sel != nil {
			opts = append(opts, client.MatchingLabelSelector{Selector: sel})
		}
		if len(t.names) == 1 {
			opts = append(opts, client.MatchingFields{"metadata.name": t.names[0]})
		}
		w, err := s.client.Watch(ctx, newList(t.mapping), opts...)
		if err != nil {
			return s.explain(err)
		}
		defer w.Stop()
		for ev := range w.ResultChan() {
			if ev.Type == client.Bookmark {
				continue
			}
			if ev.Err != nil {
				return fmt.Errorf("watch: %w; run the command again", ev.Err)
			}
			u, ok := ev.Object.(*api.Unstructured)
			if !ok {
				continue
			}
			if err := printObject(g.stdout, out, u); err != nil {
				return err
			}
		}
		return nil
	}
	if failed {
		return errSilent
	}
	return nil
}

func printObject(w io.Writer, out outputFormat, u *api.Unstructured) error {
	if out.kind == "name" {
		return printers.Name(w, u)
	}
	return printAny(w, out, u.Object)
}

func printAny(w io.Writer, out outputFormat, v map[string]any) error {
	switch out.kind {
	case "json":
		return printers.JSON(w, v)
	case "yaml":
		return printers.YAML(w, v)
	case "jsonpath":
		if err := out.jsonpath.Execute(w, normalize(v)); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	}
	return fmt.Errorf("output %q cannot print objects", out.kind)
}

// normalize turns the decoder's values (int64 numbers, typed maps) into plain
// JSON values (float64, map[string]any) for JSONPath.
func normalize(v map[string]any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return v
	}
	return out
}
