package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/printers"
	"github.com/converge-dev/converge/framework/client/resource"
	"github.com/converge-dev/converge/framework/client/restmapper"
	"github.com/converge-dev/converge/framework/patch"
)

type applyOptions struct {
	files     []string
	recursive bool
	dryRun    string
	timeout   time.Duration
}

func newApplyCommand(g *globalOptions) *cobra.Command {
	o := &applyOptions{}
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR|-",
		Short: "Create or update objects from YAML or JSON manifests",
		Long: `Create every object of the manifests that does not exist yet, and update the
ones that do. Files may hold several YAML documents separated by "---", JSON
objects, JSON arrays or kind: List. Directories are read for *.yaml, *.yml and
*.json files (with -R, also their subdirectories); "-" reads standard input.

Namespaces are applied first, then CustomResourceDefinitions, then everything
else. apply waits until the CustomResourceDefinitions it applied are Established
before it applies anything else, so a CRD and its objects can go in one call.

An existing object is updated with a JSON merge patch computed against the live
object: fields in the manifest are set, other fields are left alone (fields you
delete from a manifest are not removed from the live object). Objects with only
metadata.generateName are always created.`,
		Example: `  # Apply one file, a directory tree, or standard input
  converge apply -f deployment.yaml
  converge apply -f ./manifests -R
  cat app.yaml | converge apply -f -

  # Register CRDs and create their objects in one go
  converge apply -f crds/ -f crs/ -R

  # Check what the server would do, without changing anything
  converge apply -f app.yaml --dry-run=server`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runApply(cmd.Context(), g, o) },
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.files, "filename", "f", nil, "file, directory or - (stdin) to apply; repeatable")
	f.BoolVarP(&o.recursive, "recursive", "R", false, "also read the subdirectories of directories given with -f")
	f.StringVar(&o.dryRun, "dry-run", "none", `"server": have the server validate every write without persisting it; "none": apply`)
	f.DurationVar(&o.timeout, "timeout", time.Minute, "how long to wait for applied CustomResourceDefinitions to become Established")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

func runApply(ctx context.Context, g *globalOptions, o *applyOptions) error {
	dryRun := false
	switch o.dryRun {
	case "none", "":
	case "server":
		dryRun = true
	case "client":
		return errors.New(`--dry-run=client is not supported: use --dry-run=server, which validates against the server without persisting`)
	default:
		return fmt.Errorf(`--dry-run must be "server" or "none", not %q`, o.dryRun)
	}
	objs, err := resource.Read(resource.Options{Paths: o.files, Recursive: o.recursive, Stdin: g.stdin})
	if err != nil {
		return err
	}
	resource.SortForApply(objs)
	s, err := g.connect()
	if err != nil {
		return err
	}
	a := &applier{g: g, s: s, dryRun: dryRun, timeout: o.timeout}
	failed := 0
	for _, obj := range objs {
		if !resource.IsCRD(obj.Object) && !resource.IsNamespace(obj.Object) {
			if err := a.waitForCRDs(ctx); err != nil {
				return err
			}
		}
		if err := a.apply(ctx, obj); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failed++
			fmt.Fprintf(g.stderr, "%s\n  (applying %s %s from %s)\n", serverError(s.explain(err)),
				obj.Object.GroupVersionKind().Kind, displayName(obj.Object), obj.Source)
		}
	}
	if err := a.waitForCRDs(ctx); err != nil {
		return err
	}
	if failed > 0 {
		fmt.Fprintf(g.stderr, "%d of %d objects failed; fix them and run apply again (objects that succeeded are unchanged by a re-run)\n", failed, len(objs))
		return errSilent
	}
	return nil
}

func displayName(u *api.Unstructured) string {
	if n := u.GetName(); n != "" {
		return n
	}
	return u.GetGenerateName() + "*"
}

// applier applies objects one by one and remembers the CRDs it must wait for.
type applier struct {
	g           *globalOptions
	s           *session
	dryRun      bool
	timeout     time.Duration
	pendingCRDs []string
}

func (a *applier) apply(ctx context.Context, obj resource.Object) error {
	u := obj.Object.DeepCopy()
	gvk := u.GroupVersionKind()
	m, err := a.mapping(ctx, gvk)
	if err != nil {
		return err
	}
	if m.Namespaced {
		ns := u.GetNamespace()
		switch {
		case ns == "":
			u.SetNamespace(a.s.namespace)
		case a.s.explicitNamespace && ns != a.s.namespace:
			return fmt.Errorf("the namespace from the provided object %q does not match the namespace %q: pass --namespace=%s or remove the namespace from the manifest", ns, a.s.namespace, ns)
		}
	} else if u.GetNamespace() != "" {
		api.RemoveNestedField(u.Object, "metadata", "namespace")
	}
	// "creationTimestamp: null" and similar in generated manifests mean "unset",
	// not "delete this field".
	if md := api.NestedMap(u.Object, "metadata"); md != nil {
		for k, v := range md {
			if v == nil {
				delete(md, k)
			}
		}
	}
	var createOpts []client.CreateOption
	var patchOpts []client.PatchOption
	suffix := ""
	if a.dryRun {
		createOpts, patchOpts, suffix = []client.CreateOption{client.DryRunAll}, []client.PatchOption{client.DryRunAll}, " (server dry run)"
	}
	kindName := printers.ResourceName(gvk)
	if u.GetName() == "" {
		if u.GetGenerateName() == "" {
			return errors.New("the object has neither metadata.name nor metadata.generateName")
		}
		if err := a.s.client.Create(ctx, u, createOpts...); err != nil {
			return err
		}
		fmt.Fprintf(a.g.stdout, "%s/%s created%s\n", kindName, u.GetName(), suffix)
		return nil
	}
	for attempt := 0; ; attempt++ {
		verb, err := a.createOrPatch(ctx, u, createOpts, patchOpts)
		if apierrors.IsConflict(err) && attempt < 5 {
			continue // the live object changed under us: recompute the patch
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(a.g.stdout, "%s/%s %s%s\n", kindName, u.GetName(), verb, suffix)
		if resource.IsCRD(u) && !a.dryRun {
			a.pendingCRDs = append(a.pendingCRDs, u.GetName())
		}
		return nil
	}
}

// createOrPatch creates u, or patches the live object with the merge patch that
// turns it into live+u, guarded by the live resourceVersion. It returns the verb
// to print.
func (a *applier) createOrPatch(ctx context.Context, u *api.Unstructured, createOpts []client.CreateOption, patchOpts []client.PatchOption) (string, error) {
	live := &api.Unstructured{Object: map[string]any{}}
	live.SetGroupVersionKind(u.GroupVersionKind())
	err := a.s.client.Get(ctx, client.ObjectKeyFromObject(u), live)
	if apierrors.IsNotFound(err) {
		c := u.DeepCopy()
		if err := a.s.client.Create(ctx, c, createOpts...); err != nil {
			return "", err
		}
		return "created", nil
	}
	if err != nil {
		return "", err
	}
	liveJSON, err := json.Marshal(live.Object)
	if err != nil {
		return "", err
	}
	desired := u.DeepCopy()
	api.RemoveNestedField(desired.Object, "metadata", "resourceVersion")
	desiredJSON, err := json.Marshal(desired.Object)
	if err != nil {
		return "", err
	}
	merged, err := patch.MergePatch(liveJSON, desiredJSON)
	if err != nil {
		return "", fmt.Errorf("merge the manifest into the live object: %w", err)
	}
	diff, err := patch.CreateMergePatch(liveJSON, merged)
	if err != nil {
		return "", fmt.Errorf("compute the merge patch: %w", err)
	}
	if string(diff) == "{}" {
		return "unchanged", nil
	}
	p, err := api.DecodeMap(diff)
	if err != nil {
		return "", err
	}
	api.SetNestedField(p, live.GetResourceVersion(), "metadata", "resourceVersion")
	body, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	target := u.DeepCopy()
	if err := a.s.client.Patch(ctx, target, client.RawPatch(client.MergePatchType, body), patchOpts...); err != nil {
		return "", err
	}
	if !a.dryRun && target.GetResourceVersion() == live.GetResourceVersion() {
		// The patch only restated defaults (merge patches replace whole lists,
		// and the server defaults them again): nothing was written.
		return "unchanged", nil
	}
	return "configured", nil
}

// mapping finds the resource of gvk. Right after CRDs were established,
// discovery may lag for a moment, so misses are retried until the timeout.
func (a *applier) mapping(ctx context.Context, gvk api.GroupVersionKind) (*restmapper.Mapping, error) {
	deadline := time.Now().Add(a.timeout)
	for {
		m, err := a.s.mapper.RESTMapping(ctx, gvk)
		if err == nil || !restmapper.IsNoMatch(err) || time.Now().After(deadline) {
			return m, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitForCRDs waits until every CRD applied so far is Established, then makes
// the mapper re-read discovery so their resources are found.
func (a *applier) waitForCRDs(ctx context.Context) error {
	if len(a.pendingCRDs) == 0 {
		return nil
	}
	m, err := a.s.mapper.ResourceFor(ctx, "customresourcedefinitions.apiextensions.k8s.io")
	if err != nil {
		return a.s.explain(err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	line := a.g.newStatusLine()
	defer line.Done()
	for len(a.pendingCRDs) > 0 {
		name := a.pendingCRDs[0]
		crd := newObject(m, "", name)
		if err := a.s.client.Get(ctx, client.ObjectKeyFromObject(crd), crd); err != nil {
			return fmt.Errorf("wait for CustomResourceDefinition %s: %w", name, err)
		}
		if cond := findCondition(crd.Object, "NamesAccepted"); cond != nil && cond["status"] == "False" {
			return fmt.Errorf("CustomResourceDefinition %s: names not accepted: %v; fix spec.names and apply again", name, cond["message"])
		}
		if cond := findCondition(crd.Object, "Established"); cond != nil && cond["status"] == "True" {
			a.pendingCRDs = a.pendingCRDs[1:]
			continue
		}
		line.Update(fmt.Sprintf("waiting for CustomResourceDefinition %s to be Established", name))
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("CustomResourceDefinition %s is not Established after %s: check its status with `converge describe crd %s`", name, a.timeout, name)
			}
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	a.s.mapper.Reset()
	return nil
}

// findCondition returns status.conditions[type==typ] of obj, nil if absent.
func findCondition(obj map[string]any, typ string) map[string]any {
	for _, c := range api.NestedSlice(obj, "status", "conditions") {
		if m, ok := c.(map[string]any); ok {
			if t, _ := m["type"].(string); strings.EqualFold(t, typ) {
				return m
			}
		}
	}
	return nil
}
