package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
)

// globalOptions are the flags every command shares, and the process streams.
type globalOptions struct {
	verbosity  int
	kubeconfig string
	context    string
	namespace  string

	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// getenv reads the environment (os.Getenv outside tests).
	getenv func(string) string
}

// logger builds the logr backend (slog text on stderr) at the chosen verbosity.
func (g *globalOptions) logger() logr.Logger {
	level := slog.LevelInfo
	if g.verbosity > 0 {
		level = slog.Level(-g.verbosity * 4)
	}
	h := slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level})
	return logr.FromSlogHandler(h)
}

// NewRootCommand returns the converge command tree.
func NewRootCommand(stdout, stderr io.Writer) *cobra.Command {
	return newRoot(&globalOptions{stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv})
}

func newRoot(g *globalOptions) *cobra.Command {
	root := &cobra.Command{
		Use:   "converge",
		Short: "Converge: a Kubernetes-compatible control plane and operator SDK",
		Long: `Converge runs a Kubernetes-compatible control plane (API server on embedded etcd,
controllers, scheduler and a local node agent) in one process, and helps you
write operators for it. kubectl and client-go programs work against it unchanged,
and converge itself covers the everyday kubectl commands.`,
		Example: `  # Start a control plane, then use it from another terminal
  converge up
  export KUBECONFIG=~/.converge/kubeconfig

  # Deploy manifests (CRDs are registered before their objects)
  converge apply -f ./manifests -R
  converge get deployments
  converge wait --for=condition=Available deployment/web --timeout=60s`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(g.stdout)
	root.SetErr(g.stderr)
	root.SetIn(g.stdin)
	pf := root.PersistentFlags()
	pf.IntVarP(&g.verbosity, "v", "v", 0, "log verbosity (0: info, 1: debug)")
	pf.StringVar(&g.kubeconfig, "kubeconfig", "", "path of the kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	pf.StringVar(&g.context, "context", "", "kubeconfig context to use (default: its current-context)")
	pf.StringVarP(&g.namespace, "namespace", "n", "", "namespace of the request (default: the context's namespace, else \"default\")")
	root.AddCommand(
		newUpCommand(g),
		newApplyCommand(g),
		newGetCommand(g),
		newDescribeCommand(g),
		newDeleteCommand(g),
		newLogsCommand(g),
		newWaitCommand(g),
		newStatusCommand(g),
		newVersionCommand(g),
		newCompletionCommand(g),
		newImageCommand(g),
		newOperatorCommand(g),
		newSchedulerCommand(g),
		newEtcdCommand(g),
		newAPIServerCommand(g),
		newControllerManagerCommand(g),
		newNodeCommand(g),
		newTokenCommand(g),
		newCertsCommand(g),
		newDashboardCommand(g),
		newTestenvCommand(g),
	)
	return root
}

// Execute runs the CLI with args and returns the process exit code: 0 on
// success, 1 on any error (printed to stderr).
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return execute(ctx, &globalOptions{stdin: os.Stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}, args)
}

func execute(ctx context.Context, g *globalOptions, args []string) int {
	root := newRoot(g)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		if ec, ok := err.(exitCodeError); ok {
			return ec.code // a child's exit code (converge testenv)
		}
		if err != errSilent {
			fmt.Fprintf(g.stderr, "Error: %v\n", err)
		}
		return 1
	}
	return 0
}

func defaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ".converge"
	}
	return home + "/.converge"
}
