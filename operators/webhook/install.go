package webhook

import (
	"context"
	"errors"
	"fmt"

	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/operators"
)

// ErrNoIssuer is returned by Install for an operator with webhooks when the
// host gave no certificate Issuer.
var ErrNoIssuer = errors.New("the operator declares webhooks but the host has no certificate issuer for them")

// Install is operators.Install for hosts that serve webhooks. An operator
// without webhooks (operators.Webhooks absent or empty) is installed by
// operators.Install alone. Otherwise Install
//
//  1. starts a Server (opts): it listens, has a certificate from opts.Issuer
//     and serves until ctx ends;
//  2. applies the operator's CRDs with spec.conversion pointing at the
//     conversion webhooks, and waits until they are Established;
//  3. registers the admission webhooks (Server.Register) before Setup, so the
//     operator's own writes are already admitted by them;
//  4. runs Setup and the health checks (operators.InstallWith), then keeps
//     the registrations and the certificate current until ctx ends
//     (Server.Keep).
//
// ctx must live as long as the operator (the host's run context).
func Install(ctx context.Context, mgr *manager.Manager, op operators.Operator, opts Options) error {
	wh, ok := op.(operators.Webhooks)
	if !ok {
		return operators.Install(ctx, mgr, op)
	}
	hooks := wh.Webhooks()
	if len(hooks) == 0 {
		return operators.Install(ctx, mgr, op)
	}
	name := op.Name()
	if opts.Issuer == nil {
		return fmt.Errorf("operator %s: %w", name, ErrNoIssuer)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = mgr.Logger()
	}
	opts.Logger = opts.Logger.WithName("webhooks")
	srv, err := NewServer(name, hooks, opts)
	if err != nil {
		return fmt.Errorf("operator %s: %w", name, err)
	}
	sctx, stop := context.WithCancel(ctx)
	go func() {
		if err := srv.Serve(sctx); err != nil {
			opts.Logger.Error(err, "Webhook server stopped")
		}
	}()
	err = operators.InstallWith(ctx, mgr, op, operators.InstallOptions{
		PrepareCRDs: srv.PrepareCRDs,
		BeforeSetup: func(ctx context.Context) error {
			if err := srv.Register(ctx, mgr.Client()); err != nil {
				return fmt.Errorf("register webhooks: %w", err)
			}
			return nil
		},
	})
	if err != nil {
		stop()
		return err
	}
	go func() {
		defer stop()
		srv.Keep(sctx, mgr.Client())
	}()
	return nil
}
