package controlplane

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/tracing"
	"github.com/converge-dev/converge/framework/tracing/otlp"
)

// newTracedManager creates the manager of a split component (service names
// its spans): with tracing on and no TracerProvider given, it builds one from
// cfg and flushes it when the manager stops.
func newTracedManager(cfg *client.Config, o manager.Options, t tracing.Config, service string) (*manager.Manager, error) {
	var tp *otlp.Provider
	if t.Enabled() && o.TracerProvider == nil {
		p, err := otlp.New(logr.NewContext(context.Background(), o.Logger), t, service)
		if err != nil {
			return nil, err
		}
		tp, o.TracerProvider = p, p
	}
	mgr, err := manager.New(cfg, o)
	if err != nil {
		return nil, err
	}
	if tp != nil {
		flush := manager.RunnableFunc(func(ctx context.Context) error {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				return fmt.Errorf("%s: %w", service, err)
			}
			return nil
		})
		if err := mgr.Add(flush); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}
