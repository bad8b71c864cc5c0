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

// globalOptions are the flags every command shares.
type globalOptions struct {
	verbosity int
	stdout    io.Writer
	stderr    io.Writer
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
	g := &globalOptions{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "converge",
		Short: "Converge: a Kubernetes-compatible control plane and operator SDK",
		Long: `Converge runs a Kubernetes-compatible control plane (API server on embedded etcd,
controllers, scheduler and a local node agent) in one process, and helps you
write operators for it. kubectl and client-go programs work against it unchanged.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().IntVarP(&g.verbosity, "v", "v", 0, "log verbosity (0: info, 1: debug)")
	root.AddCommand(newUpCommand(g), newVersionCommand(g))
	return root
}

// Execute runs the CLI with args and returns the process exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRootCommand(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
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
