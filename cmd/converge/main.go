// Command converge is the Converge control plane and CLI.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/converge-dev/converge/cmd/converge/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
