package node

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "github.com/converge-dev/converge/builtin/api/coordination/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
)

// LeaseNamespace holds the node heartbeat Leases.
const LeaseNamespace = "kube-node-lease"

// renewLease creates or renews the node's Lease.
func (a *Agent) renewLease(ctx context.Context) error {
	now := api.NowMicro()
	lease := &coordinationv1.Lease{}
	err := a.c.Get(ctx, client.ObjectKey{Namespace: LeaseNamespace, Name: a.opts.NodeName}, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{}
		lease.Namespace, lease.Name = LeaseNamespace, a.opts.NodeName
		if a.nodeUID != "" {
			lease.OwnerReferences = []api.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: a.opts.NodeName, UID: a.nodeUID}}
		}
		lease.Spec = coordinationv1.LeaseSpec{
			HolderIdentity:       api.Ptr(a.opts.NodeName),
			LeaseDurationSeconds: api.Ptr(int32(a.opts.LeaseDuration / time.Second)),
			RenewTime:            &now,
		}
		if err := a.c.Create(ctx, lease); err != nil {
			return fmt.Errorf("create lease %s/%s: %w", LeaseNamespace, a.opts.NodeName, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease %s/%s: %w", LeaseNamespace, a.opts.NodeName, err)
	}
	lease.Spec.HolderIdentity = api.Ptr(a.opts.NodeName)
	lease.Spec.LeaseDurationSeconds = api.Ptr(int32(a.opts.LeaseDuration / time.Second))
	lease.Spec.RenewTime = &now
	if err := a.c.Update(ctx, lease); err != nil {
		return fmt.Errorf("renew lease %s/%s: %w", LeaseNamespace, a.opts.NodeName, err)
	}
	return nil
}

func (a *Agent) runLease(ctx context.Context) {
	for {
		if err := a.renewLease(ctx); err != nil && ctx.Err() == nil {
			a.log.Error(err, "Lease renewal failed")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(a.opts.LeaseRenewInterval):
		}
	}
}
