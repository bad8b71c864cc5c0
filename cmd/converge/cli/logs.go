package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/rest"
)

type logsOptions struct {
	follow    bool
	container string
	previous  bool
	tail      int64
}

func newLogsCommand(g *globalOptions) *cobra.Command {
	o := &logsOptions{}
	cmd := &cobra.Command{
		Use:   "logs POD | pod/POD",
		Short: "Print the logs of a container in a pod",
		Long: `Print the logs of one container of a pod, read from the pods/log subresource
of the API server (served by the node agent that runs the pod).`,
		Example: `  converge logs web-0
  converge logs web-0 -c sidecar -f
  converge logs pod/web-0 --previous`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runLogs(cmd.Context(), g, o, args[0]) },
	}
	f := cmd.Flags()
	f.BoolVarP(&o.follow, "follow", "f", false, "keep streaming new log lines until interrupted")
	f.StringVarP(&o.container, "container", "c", "", "container name (default: the pod's only container)")
	f.BoolVarP(&o.previous, "previous", "p", false, "logs of the previous, terminated instance of the container")
	f.Int64Var(&o.tail, "tail", -1, "only the last N lines (-1: all)")
	return cmd
}

func runLogs(ctx context.Context, g *globalOptions, o *logsOptions, arg string) error {
	name := arg
	if typ, n, ok := strings.Cut(arg, "/"); ok {
		if typ != "pod" && typ != "pods" && typ != "po" {
			return fmt.Errorf("logs reads pods, not %s: give POD or pod/POD", typ)
		}
		name = n
	}
	s, err := g.connect()
	if err != nil {
		return err
	}
	q := url.Values{}
	if o.container != "" {
		q.Set("container", o.container)
	}
	if o.follow {
		q.Set("follow", "true")
	}
	if o.previous {
		q.Set("previous", "true")
	}
	if o.tail >= 0 {
		q.Set("tailLines", strconv.FormatInt(o.tail, 10))
	}
	path := "/api/v1/namespaces/" + url.PathEscape(s.namespace) + "/pods/" + url.PathEscape(name) + "/log"
	body, err := s.rest.Stream(ctx, rest.Request{Method: http.MethodGet, Path: path, Query: q})
	if err != nil {
		return logsError(ctx, s, name, err)
	}
	defer body.Close()
	go func() { <-ctx.Done(); body.Close() }()
	if _, err := io.Copy(g.stdout, body); err != nil && ctx.Err() == nil {
		return fmt.Errorf("reading logs of pod %s: %w", name, err)
	}
	return nil
}

// logsError explains a failed log request: a missing pod, or a pod whose logs
// cannot be read (not scheduled, node agent unreachable).
func logsError(ctx context.Context, s *session, name string, err error) error {
	if !apierrors.IsNotFound(err) && !apierrors.IsMethodNotSupported(err) {
		return s.explain(err)
	}
	pod := &api.Unstructured{Object: map[string]any{}}
	pod.SetGroupVersionKind(api.GroupVersionKind{Version: "v1", Kind: "Pod"})
	perr := s.client.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: name}, pod)
	if apierrors.IsNotFound(perr) {
		return fmt.Errorf("pod %q not found in namespace %s: list pods with `converge get pods -n %s`", name, s.namespace, s.namespace)
	}
	var se *apierrors.StatusError
	msg := err.Error()
	if errors.As(err, &se) {
		msg = se.ErrStatus.Message
	}
	return fmt.Errorf("no logs for pod %s/%s: %s (logs come from the node agent running the pod)", s.namespace, name, msg)
}
