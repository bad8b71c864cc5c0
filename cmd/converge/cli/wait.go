package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/api/labels"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/printers"
)

type waitOptions struct {
	forSpec  string
	timeout  time.Duration
	selector string
	all      bool
}

// waitCondition is a parsed --for.
type waitCondition struct {
	delete    bool
	condition string // condition type
	status    string // wanted condition status (default "True")
	jsonpath  *printers.JSONPath
	value     *string // wanted JSONPath value; nil: the path must exist
	text      string  // for messages
}

// check reports whether u meets the condition, and the state seen otherwise.
func (c waitCondition) check(u *api.Unstructured) (bool, string) {
	switch {
	case c.condition != "":
		cond := findCondition(u.Object, c.condition)
		if cond == nil {
			return false, fmt.Sprintf("no %s condition yet", c.condition)
		}
		st, _ := cond["status"].(string)
		if strings.EqualFold(st, c.status) {
			return true, ""
		}
		state := fmt.Sprintf("%s is %s", c.condition, st)
		if r, _ := cond["reason"].(string); r != "" {
			state += " (" + r + ")"
		}
		return false, state
	default:
		got := c.jsonpath.Find(normalize(u.Object))
		if c.value == nil {
			if len(got) > 0 {
				return true, ""
			}
			return false, "the path has no value yet"
		}
		if len(got) == 1 && printers.FormatValue(got[0]) == *c.value {
			return true, ""
		}
		vals := make([]string, len(got))
		for i, v := range got {
			vals[i] = printers.FormatValue(v)
		}
		return false, fmt.Sprintf("value is %q", strings.Join(vals, " "))
	}
}

func parseWaitFor(s string) (waitCondition, error) {
	c := waitCondition{text: s}
	switch {
	case s == "delete":
		c.delete = true
	case strings.HasPrefix(s, "condition="):
		rest := strings.TrimPrefix(s, "condition=")
		typ, status, ok := strings.Cut(rest, "=")
		if !ok {
			status = "True"
		}
		if typ == "" {
			return c, errors.New("--for=condition= needs a condition type, e.g. --for=condition=Ready")
		}
		c.condition, c.status = typ, status
	case strings.HasPrefix(s, "jsonpath="):
		expr := strings.TrimPrefix(s, "jsonpath=")
		var path string
		var value *string
		if strings.HasPrefix(expr, "{") {
			end := strings.Index(expr, "}")
			if end < 0 {
				return c, fmt.Errorf("--for=%s: unclosed {", s)
			}
			path = expr[:end+1]
			if v, ok := strings.CutPrefix(expr[end+1:], "="); ok {
				value = &v
			} else if expr[end+1:] != "" {
				return c, fmt.Errorf("--for=%s: expected =VALUE after the path", s)
			}
		} else if p, v, ok := strings.Cut(expr, "="); ok {
			path, value = p, &v
		} else {
			path = expr
		}
		jp, err := printers.ParseJSONPath(path)
		if err != nil {
			return c, fmt.Errorf("--for=%s: %w", s, err)
		}
		c.jsonpath, c.value = jp, value
	default:
		return c, fmt.Errorf("--for=%q: use delete, condition=TYPE[=STATUS] or jsonpath='{PATH}'[=VALUE]", s)
	}
	return c, nil
}

func newWaitCommand(g *globalOptions) *cobra.Command {
	o := &waitOptions{}
	cmd := &cobra.Command{
		Use:   "wait (TYPE NAME... | TYPE/NAME... | TYPE -l SELECTOR | TYPE --all) --for=CONDITION",
		Short: "Wait until objects meet a condition, or are deleted",
		Long: `Wait until every named object meets the condition given with --for:

  --for=condition=TYPE[=STATUS]   status.conditions[type=TYPE].status is STATUS (default True)
  --for=jsonpath='{PATH}'[=VALUE] PATH has VALUE (or, without =VALUE, any value)
  --for=delete                    the object is gone

It prints "TYPE/NAME condition met" for each object and exits 0, or exits 1
after --timeout with the state it saw last. On a terminal it shows a live
status line on stderr; otherwise it prints a line whenever the state changes.`,
		Example: `  converge wait --for=condition=Available deployment/web --timeout=2m
  converge wait --for=jsonpath='{.status.phase}'=Running pod/web-0
  converge wait --for=condition=Established crd/foos.samplecontroller.k8s.io
  converge wait --for=delete pod -l app=web`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runWait(cmd.Context(), g, o, args) },
	}
	f := cmd.Flags()
	f.StringVar(&o.forSpec, "for", "", "the condition: delete, condition=TYPE[=STATUS] or jsonpath='{PATH}'[=VALUE]")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "give up after this long (0: check once)")
	f.StringVarP(&o.selector, "selector", "l", "", "wait for the objects matching this label selector")
	f.BoolVar(&o.all, "all", false, "wait for every object of the type in the namespace")
	_ = cmd.MarkFlagRequired("for")
	return cmd
}

func runWait(ctx context.Context, g *globalOptions, o *waitOptions, args []string) error {
	cond, err := parseWaitFor(o.forSpec)
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
	var objs []*api.Unstructured
	for _, t := range targets {
		ns := s.objectNamespace(t.mapping, false)
		if len(t.names) > 0 {
			for _, n := range t.names {
				objs = append(objs, newObject(t.mapping, ns, n))
			}
			continue
		}
		if sel == nil && !o.all {
			return fmt.Errorf("say which %s to wait for: give names, -l SELECTOR, or --all", groupResource(t.mapping))
		}
		items, err := listObjects(ctx, s, t.mapping, ns, sel)
		if err != nil {
			return err
		}
		objs = append(objs, items...)
	}
	if len(objs) == 0 {
		return errors.New("no matching objects found: nothing to wait for")
	}
	wctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	line := g.newStatusLine()
	defer line.Done()
	for _, u := range objs {
		ref := printers.ResourceName(u.GroupVersionKind()) + "/" + u.GetName()
		state, err := waitOne(wctx, s, u, cond, func(state string) {
			line.Update(fmt.Sprintf("waiting for %s: %s (%s)", ref, cond.text, state))
		})
		if err != nil {
			line.Done()
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("timed out after %s waiting for %s on %s; last seen: %s", o.timeout, cond.text, ref, state)
			}
			return s.explain(err)
		}
		line.Done()
		fmt.Fprintf(g.stdout, "%s condition met\n", ref)
	}
	return nil
}

// waitOne polls u until cond holds; it returns the last state seen.
func waitOne(ctx context.Context, s *session, u *api.Unstructured, cond waitCondition, tick func(string)) (string, error) {
	state := "not checked yet"
	for {
		cur := &api.Unstructured{Object: map[string]any{}}
		cur.SetGroupVersionKind(u.GroupVersionKind())
		err := s.client.Get(ctx, client.ObjectKeyFromObject(u), cur)
		switch {
		case cond.delete && apierrors.IsNotFound(err):
			return "", nil
		case cond.delete && err == nil:
			state = "still exists"
			if cur.GetDeletionTimestamp() != nil {
				state = "being deleted; finalizers: " + strings.Join(cur.GetFinalizers(), ",")
			}
		case apierrors.IsNotFound(err):
			state = "not found"
		case err != nil:
			if ctx.Err() != nil {
				return state, ctx.Err()
			}
			return state, err
		default:
			ok, st := cond.check(cur)
			if ok {
				return "", nil
			}
			state = st
		}
		tick(state)
		select {
		case <-ctx.Done():
			return state, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
