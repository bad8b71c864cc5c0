package controlplane

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	bflowcontrol "github.com/converge-dev/converge/builtin/flowcontrol"
	"github.com/converge-dev/converge/framework/apiserver/flowcontrol"
	"github.com/converge-dev/converge/framework/storage"
)

// newFlowControl builds API Priority and Fairness when in-flight limits are
// set (secure mode): the server's limit is the sum of the read-only and
// mutating limits, as in Kubernetes, and each flow may hold
// PerUserInFlightPercent of its level. Lists are estimated from the API
// server's object counts (read once startFlowControl runs it), as served
// from the watch cache when the store reports watch progress. It enforces
// the default configuration until startFlowControl has read the stored one.
// Nil without limits.
func (cp *ControlPlane) newFlowControl() func(http.Handler) http.Handler {
	total := max(cp.opts.MaxReadOnlyInFlight, 0) + max(cp.opts.MaxMutatingInFlight, 0)
	if total == 0 {
		return nil
	}
	_, progress := cp.store.(storage.ProgressRequester)
	cp.flowControl = flowcontrol.New(flowcontrol.Options{
		ServerConcurrencyLimit: total, PerFlowPercent: cp.opts.PerUserInFlightPercent,
		ObjectCounts: func() map[string]int64 {
			if cp.server == nil {
				return nil
			}
			return cp.server.StoredObjects()
		},
		ConsistentListFromCache: progress,
		Logger:                  cp.log.WithName("flowcontrol"),
	}, bflowcontrol.DefaultConfig())
	return cp.flowControl.Filter
}

// flowControlMetrics are the priority and fairness metrics for /metrics.
func (cp *ControlPlane) flowControlMetrics() []prometheus.Collector {
	if cp.flowControl == nil {
		return nil
	}
	return []prometheus.Collector{cp.flowControl}
}

// startFlowControl creates the default FlowSchemas and
// PriorityLevelConfigurations and keeps the filter fed with the stored ones
// (builtin/flowcontrol), in the background: the filter enforces the defaults
// meanwhile, so start-up does not wait for the objects. Failures are logged
// and retried. It also runs the filter's borrowing between levels and its
// object counts.
func (cp *ControlPlane) startFlowControl(runCtx context.Context) error {
	if cp.flowControl == nil {
		return nil
	}
	c, err := cp.apiServerClient()
	if err != nil {
		return fmt.Errorf("create flow control client: %w", err)
	}
	r := bflowcontrol.New(bflowcontrol.Options{Client: c, Filter: cp.flowControl, Logger: cp.log.WithName("flowcontrol")})
	cp.wg.Add(2)
	go func() {
		defer cp.wg.Done()
		_ = r.Start(runCtx)
	}()
	go func() {
		defer cp.wg.Done()
		cp.flowControl.Run(runCtx)
	}()
	return nil
}
