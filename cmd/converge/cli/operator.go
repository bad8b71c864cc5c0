package cli

import (
	"cmp"
	"fmt"
	"os"
	"runtime/debug"
	"slices"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/operators/build"
	"github.com/converge-dev/converge/operators/run"
	"github.com/converge-dev/converge/operators/scaffold"
)

func newOperatorCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Scaffold, build and run operators (Go plugins, compiled in, or standalone)",
		Example: `  converge operator init memcached --group cache.example.com --version v1alpha1 --kind Memcached
  converge operator build ./memcached -o memcached.so
  converge up --operator memcached.so
  converge operator run ./memcached`,
	}
	cmd.AddCommand(newOperatorInitCommand(g), newOperatorBuildCommand(g), newOperatorRunCommand(g),
		newOperatorGenerateCommand(g), newOperatorListCommand(g), newOperatorLoadCommand(g))
	return cmd
}

func newOperatorBuildCommand(g *globalOptions) *cobra.Command {
	var output, src string
	cmd := &cobra.Command{
		Use:   "build DIR -o NAME.so",
		Short: "Build an operator as a Go plugin that loads into this converge binary",
		Long: `Build an operator as a Go plugin (-buildmode=plugin) with exactly the Go version, build
flags and module versions of the running converge binary, so that it always loads into it.`,
		Example: `  converge operator build ./memcached -o memcached.so
  converge operator build ./memcached -o memcached.so --converge-src ~/src/converge`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := build.Build(cmd.Context(), build.Options{
				Dir: args[0], Output: output, ConvergeSource: cmp.Or(src, os.Getenv("CONVERGE_SRC")),
				Stderr: g.stderr,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Built %s\nLoad it with: converge up --operator %s\n", res.Output, res.Output)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "plugin file to write (default <dir name>.so)")
	cmd.Flags().StringVar(&src, "converge-src", "", "converge source tree (default $CONVERGE_SRC, or the tree this binary was built from)")
	return cmd
}

func newOperatorInitCommand(g *globalOptions) *cobra.Command {
	o := scaffold.Options{}
	var src string
	cmd := &cobra.Command{
		Use:   "init NAME --group G --version V --kind K",
		Short: "Scaffold a new operator module that builds and passes its tests right away",
		Example: `  converge operator init memcached --group cache.example.com --version v1alpha1 --kind Memcached
  cd memcached && make test && make plugin`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.Name = args[0]
			o.Dir = cmp.Or(o.Dir, args[0])
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
				o.ConvergeVersion = bi.Main.Version
			} else {
				o.ConvergeSource = cmp.Or(src, os.Getenv("CONVERGE_SRC"), build.SourceDir())
			}
			files, err := scaffold.Init(o)
			if err != nil {
				return err
			}
			slices.Sort(files)
			for _, f := range files {
				fmt.Fprintf(g.stdout, "created %s\n", f)
			}
			fmt.Fprintf(g.stdout, "\nNext: cd %s && make test\n", o.Dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Group, "group", "", "API group of the custom resource (e.g. cache.example.com)")
	f.StringVar(&o.Version, "version", "v1alpha1", "API version of the custom resource")
	f.StringVar(&o.Kind, "kind", "", "kind of the custom resource (UpperCamelCase)")
	f.StringVar(&o.Module, "module", "", "Go module path (default example.com/<name>)")
	f.StringVar(&o.Dir, "dir", "", "directory to create (default NAME)")
	f.StringVar(&src, "converge-src", "", "converge source tree to build against (default: the tree this binary was built from)")
	return cmd
}

func newOperatorRunCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run DIR [-- FLAGS]",
		Short: "Run an operator standalone against the current kubeconfig (leader election, /metrics, /healthz)",
		Example: `  converge operator run ./memcached
  converge operator run ./memcached -- --metrics-bind-address :9090`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			extra := args[1:]
			if g.kubeconfig != "" && !slices.Contains(extra, "--kubeconfig") {
				extra = append(extra, "--kubeconfig", g.kubeconfig)
			}
			c, err := run.Command(cmd.Context(), args[0], extra)
			if err != nil {
				return err
			}
			c.Stdin, c.Stdout, c.Stderr = os.Stdin, g.stdout, g.stderr
			return c.Run()
		},
	}
	return cmd
}
