package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/converge-dev/converge/operators/loader"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/printers"
	"github.com/converge-dev/converge/framework/client/rest"
)

// statusReport is what `converge status -o json` prints; its field names are
// a stable interface for scripts.
type statusReport struct {
	Server     string            `json:"server"`
	Kubeconfig string            `json:"kubeconfig,omitempty"`
	Context    string            `json:"context,omitempty"`
	Namespace  string            `json:"namespace"`
	Live       bool              `json:"live"`
	Ready      bool              `json:"ready"`
	Problems   []string          `json:"problems,omitempty"`
	Version    string            `json:"version,omitempty"`
	DataDir    string            `json:"dataDir,omitempty"`
	Endpoints  map[string]string `json:"endpoints"`
	Operators  []loader.Report   `json:"operators,omitempty"`
}

func newStatusCommand(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the health and version of the API server the kubeconfig points at",
		Long: `Check the API server of the current kubeconfig context: liveness (/livez),
readiness (/readyz), its Kubernetes version, the data dir of a local
` + "`converge up`" + ` (found next to its kubeconfig) and the endpoints to use.
It exits 1 when the server is not live or not ready.`,
		Example: `  converge status
  converge status --kubeconfig ~/.converge/kubeconfig -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runStatus(cmd.Context(), g, output) },
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json (default: text)")
	return cmd
}

func runStatus(ctx context.Context, g *globalOptions, output string) error {
	if output != "" && output != "json" {
		return fmt.Errorf("unknown output format %q: use json or leave it out", output)
	}
	s, err := g.connect()
	if err != nil {
		return err
	}
	r := statusReport{Server: s.cfg.Host, Namespace: s.namespace, Kubeconfig: g.kubeconfigPath(), Context: g.context,
		Endpoints: map[string]string{"api": s.cfg.Host, "livez": s.cfg.Host + "/livez", "readyz": s.cfg.Host + "/readyz"}}
	if r.Kubeconfig != "" {
		if f, err := kubeconfig.ReadFile(r.Kubeconfig); err == nil && r.Context == "" {
			r.Context = f.CurrentContext
		}
		dir := filepath.Dir(r.Kubeconfig)
		if fi, err := os.Stat(filepath.Join(dir, "etcd")); err == nil && fi.IsDir() {
			r.DataDir = dir
		}
	}
	probe := func(path string) error {
		_, err := s.rest.Do(ctx, rest.Request{Method: http.MethodGet, Path: path})
		return err
	}
	if err := probe("/livez"); err != nil {
		r.Problems = append(r.Problems, "livez: "+err.Error())
	} else {
		r.Live = true
	}
	if r.Live {
		if err := probe("/readyz"); err != nil {
			r.Problems = append(r.Problems, "readyz: "+err.Error())
		} else {
			r.Ready = true
		}
		if resp, err := s.rest.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/version"}); err == nil {
			var v struct {
				GitVersion string `json:"gitVersion"`
				Platform   string `json:"platform"`
			}
			if json.Unmarshal(resp.Body, &v) == nil {
				r.Version = strings.TrimSpace(v.GitVersion + " " + v.Platform)
			}
		}
	}
	if r.Live {
		if reports, err := loader.ReadReports(ctx, s.client); err == nil {
			r.Operators = reports
			for _, op := range reports {
				if op.Error != "" && op.State != loader.Superseded {
					r.Problems = append(r.Problems, "operator "+cmp.Or(op.Name, filepath.Base(op.Path))+": "+op.Error)
				}
			}
		}
	}
	if output == "json" {
		if err := printers.JSON(g.stdout, r); err != nil {
			return err
		}
	} else {
		printStatus(g, r)
	}
	if !r.Live || !r.Ready {
		if output == "json" {
			return errSilent
		}
		return errors.New("the API server is not healthy (see above): start it with `converge up`, or check --kubeconfig and --context")
	}
	return nil
}

func printStatus(g *globalOptions, r statusReport) {
	w := g.stdout
	mark := func(ok bool) string {
		if ok {
			return g.color(w, colorGreen, "ok")
		}
		return g.color(w, colorRed, "failing")
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "Server:\t%s\n", r.Server)
	if r.Kubeconfig != "" {
		fmt.Fprintf(tw, "Kubeconfig:\t%s\n", r.Kubeconfig)
	}
	if r.Context != "" {
		fmt.Fprintf(tw, "Context:\t%s\n", r.Context)
	}
	fmt.Fprintf(tw, "Namespace:\t%s\n", r.Namespace)
	fmt.Fprintf(tw, "Live:\t%s\n", mark(r.Live))
	fmt.Fprintf(tw, "Ready:\t%s\n", mark(r.Ready))
	if r.Version != "" {
		fmt.Fprintf(tw, "Version:\t%s\n", r.Version)
	}
	if r.DataDir != "" {
		fmt.Fprintf(tw, "Data dir:\t%s\n", r.DataDir)
	}
	for _, op := range r.Operators {
		fmt.Fprintf(tw, "Operator %s:\t%s %s\n", cmp.Or(op.Name, filepath.Base(op.Path)), op.State, op.Error)
	}
	fmt.Fprintf(tw, "Endpoints:\tapi %s\n", r.Endpoints["api"])
	fmt.Fprintf(tw, "\tlivez %s\n", r.Endpoints["livez"])
	fmt.Fprintf(tw, "\treadyz %s\n", r.Endpoints["readyz"])
	_ = tw.Flush()
	for _, p := range r.Problems {
		fmt.Fprintf(g.stderr, "  %s\n", p)
	}
}

// kubeconfigPath is the kubeconfig file in use, for display: --kubeconfig, else
// the first file of $KUBECONFIG, else ~/.kube/config if it exists.
func (g *globalOptions) kubeconfigPath() string {
	if g.kubeconfig != "" {
		return g.kubeconfig
	}
	if env := g.getenv("KUBECONFIG"); env != "" {
		for _, p := range filepath.SplitList(env) {
			if p != "" {
				return p
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".kube", "config")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
