// Command testhost is a minimal converge-like host for the operator tests: a
// real cgo binary (go test binaries cannot load plugins built by the
// operator builder) that builds, checks and loads operator plugins.
//
//	testhost build DIR OUT.so        build DIR as a plugin for this binary
//	testhost load PLUGIN.so...       load plugins; print each result
//	testhost run KUBECONFIG PLUGIN.so...  load and run them in a manager until killed
//	testhost watch KUBECONFIG DIR         load DIR's plugins, then those dropped into it, until killed
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/operators/build"
	"github.com/converge-dev/converge/operators/loader"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Println("ERROR:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("usage: testhost build|load|run ...")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "build":
		res, err := build.Build(ctx, build.Options{Dir: args[1], Output: args[2], Stderr: os.Stderr})
		if err != nil {
			return err
		}
		fmt.Println("BUILT", res.Output)
		return nil
	case "load":
		for _, p := range args[1:] {
			op, err := loader.Load(p)
			if err != nil {
				fmt.Println("REFUSED", err)
				continue
			}
			fmt.Println("LOADED", op.Name())
		}
		return nil
	case "run":
		cfg, _, err := kubeconfig.LoadKubeconfig(args[1], "")
		if err != nil {
			return err
		}
		log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
		mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New(), Logger: log})
		if err != nil {
			return err
		}
		reports := loader.Start(ctx, mgr, loader.Options{Paths: args[2:], Logger: log})
		for _, r := range reports {
			fmt.Println("OPERATOR", r.Name, r.State, r.Error)
		}
		if err := loader.Publish(ctx, mgr.Client(), reports, log); err != nil {
			return err
		}
		fmt.Println("STARTED")
		return mgr.Start(ctx)
	case "watch":
		cfg, _, err := kubeconfig.LoadKubeconfig(args[1], "")
		if err != nil {
			return err
		}
		log := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
		mgr, err := manager.New(cfg, manager.Options{Scheme: scheme.New(), Logger: log})
		if err != nil {
			return err
		}
		ld := loader.New(mgr, loader.Options{Dir: args[2], Logger: log})
		if err := mgr.Add(ld.Watcher(loader.WatchOptions{Client: mgr.Client(), Interval: 100 * time.Millisecond,
			StatusInterval: time.Second})); err != nil {
			return err
		}
		for _, r := range ld.Start(ctx) {
			fmt.Println("OPERATOR", r.Name, r.State, r.Error)
		}
		if err := loader.Publish(ctx, mgr.Client(), ld.Reports(), log); err != nil {
			return err
		}
		fmt.Println("STARTED")
		return mgr.Start(ctx)
	}
	return fmt.Errorf("unknown command %q", args[0])
}
