package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/operators/loader"
)

func newOperatorListCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the operators loaded into the running control plane, their controllers and reconcile rates",
		Long: `List the operator plugins of the running control plane (what it published in
kube-system/converge-operators): state, build, controllers with their reconcile counts, errors
and rates (refreshed every 10 s) and each controller's last error, and why a plugin was refused.`,
		Example: `  converge operator list
  converge operator list --kubeconfig ~/.converge/kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.connect()
			if err != nil {
				return err
			}
			reports, err := loader.ReadReports(cmd.Context(), s.client)
			if err != nil {
				return s.explain(err)
			}
			printOperators(g.stdout, reports)
			return nil
		},
	}
}

func printOperators(out io.Writer, reports []loader.Report) {
	if len(reports) == 0 {
		fmt.Fprintln(out, "No operators loaded (drop a plugin into <data-dir>/operators, or converge up --operator X.so).")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tCONTROLLER\tRECONCILES\tERRORS\tRATE/S\tBUILD\tPATH")
	for _, r := range reports {
		name := cmp.Or(r.Name, "-")
		if len(r.Controllers) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t%s\t%s\n", name, r.State, cmp.Or(r.Build, "-"), r.Path)
		}
		for _, c := range r.Controllers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f\t%.0f\t%.2f\t%s\t%s\n", name, r.State, c.Name, c.Reconciles, c.Errors, c.Rate,
				cmp.Or(r.Build, "-"), r.Path)
		}
	}
	_ = tw.Flush()
	for _, r := range reports {
		for _, c := range r.Controllers {
			if c.LastError != "" {
				fmt.Fprintf(out, "\n%s/%s last error (%s ago): %s\n", cmp.Or(r.Name, "-"), c.Name,
					time.Since(c.LastErrorTime).Round(time.Second), c.LastError)
			}
		}
		if r.Error != "" {
			fmt.Fprintf(out, "\n%s (%s): %s\n", cmp.Or(r.Name, filepath.Base(r.Path)), r.State, r.Error)
		}
	}
}

func newOperatorLoadCommand(g *globalOptions) *cobra.Command {
	var dataDir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "load PLUGIN.so",
		Short: "Load an operator plugin into the running converge up, without a restart",
		Long: `Copy PLUGIN.so into <data-dir>/operators, where the running control plane loads it
within a second, and wait for its report. A plugin whose operator is already loaded is refused:
Go plugins cannot be unloaded, so a new build of a loaded operator needs a restart (converge up
then loads the newest build in the directory).`,
		Example: `  converge operator build ./memcached -o memcached.so && converge operator load memcached.so`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := filepath.Join(dataDir, "operators")
			dst, err := copyPlugin(args[0], dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Copied to %s\n", dst)
			s, err := g.connect()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			for {
				reports, err := loader.ReadReports(ctx, s.client)
				if err == nil {
					for _, r := range reports {
						if r.Path == dst {
							printOperators(g.stdout, []loader.Report{r})
							if r.State != loader.Running {
								return errSilent
							}
							return nil
						}
					}
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("no report for %s after %s: is converge up running with data dir %s?", dst, timeout, dataDir)
				case <-time.After(200 * time.Millisecond):
				}
			}
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "data directory of the running converge up")
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait for the control plane's report")
	return cmd
}

// copyPlugin copies src into dir under its base name, atomically (a
// temporary name, then a rename), and returns the absolute destination.
func copyPlugin(src, dir string) (string, error) {
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("read plugin: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("operator directory: %w", err)
	}
	abs, err := filepath.Abs(filepath.Join(dir, filepath.Base(src)))
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(abs, ".so") {
		abs += ".so"
	}
	if _, err := os.Stat(abs); err == nil {
		return "", fmt.Errorf("%s exists: a plugin file is loaded once; give the new build another name (it is refused until a restart if its operator is loaded)", abs)
	}
	tmp := filepath.Join(dir, "."+filepath.Base(abs)+".tmp")
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		return "", fmt.Errorf("copy plugin: %w", err)
	}
	if err := os.Rename(tmp, abs); err != nil {
		return "", fmt.Errorf("copy plugin: %w", err)
	}
	return abs, nil
}
