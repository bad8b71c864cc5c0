// Command custombinary is a program of its own with the PostgreSQL operator
// compiled in, the third way docs/operators.md describes: a manager,
// operators.Install, then Start. No plugin and no run.Main; the standalone
// suite runs it against a control plane to show that this is enough.
//
//	custombinary --kubeconfig ~/.converge/kubeconfig
//
// The operator's settings come from the environment (postgres.OptionsFromEnv).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators"
	"github.com/converge-dev/converge/operators/postgres"
)

func main() {
	path := flag.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, nil))
	if err := run(ctx, *path, log); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		stop()
		os.Exit(1) //nolint:gocritic // stop() already ran
	}
}

// run installs the operator into a manager of its own and runs it until ctx
// ends.
func run(ctx context.Context, path string, log logr.Logger) error {
	cfg, _, err := kubeconfig.FromEnvironment(path, "")
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New(), Logger: log})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	// CRDs applied and Established, then the operator's controllers.
	if err := operators.Install(ctx, mgr, postgres.NewWithOptions(postgres.OptionsFromEnv(os.Getenv))); err != nil {
		return fmt.Errorf("install the postgres operator: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("run the manager: %w", err)
	}
	return nil
}
