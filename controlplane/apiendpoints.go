package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/builtin/apiendpoints"
	"github.com/converge-dev/converge/builtin/defaultservicecidr"
	"github.com/converge-dev/converge/framework/client"
)

// startAPIEndpoints keeps the default/kubernetes Service, Endpoints and
// EndpointSlice pointing at the live API servers (builtin/apiendpoints), this
// one included. The first pass runs before it returns, so the Service exists
// for the components started after it; a failed pass is logged and retried,
// never fatal (a Service IP held by another Service must not stop the server).
func (cp *ControlPlane) startAPIEndpoints(ctx, runCtx context.Context, serviceIP netip.Addr) error {
	c, err := cp.apiServerClient()
	if err != nil {
		return fmt.Errorf("create kubernetes service client: %w", err)
	}
	r, err := apiendpoints.New(apiendpoints.Options{
		Client: c, Store: cp.store, ServiceIP: serviceIP,
		Address: apiendpoints.AdvertiseAddress(cp.opts.BindAddress),
		Port:    int32(cp.listener.Addr().(*net.TCPAddr).Port),
		Logger:  cp.log.WithName("apiendpoints"),
	})
	if err != nil {
		return err
	}
	if err := r.Sync(ctx); err != nil {
		cp.log.Error(err, "Sync of the kubernetes service endpoints failed")
	}
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		_ = r.Start(runCtx)
	}()
	return nil
}

// startDefaultServiceCIDR keeps the default ServiceCIDR "kubernetes" (the
// service range, builtin/defaultservicecidr) in the background (nothing at
// start-up waits for it); a failed pass is logged and retried, never fatal.
func (cp *ControlPlane) startDefaultServiceCIDR(runCtx context.Context, cidr netip.Prefix) error {
	c, err := cp.apiServerClient()
	if err != nil {
		return err
	}
	r, err := defaultservicecidr.New(defaultservicecidr.Options{
		Client: c, CIDRs: []netip.Prefix{cidr}, Logger: cp.log.WithName("defaultservicecidr"),
	})
	if err != nil {
		return err
	}
	cp.wg.Add(1)
	go func() {
		defer cp.wg.Done()
		if err := r.Sync(runCtx); err != nil && runCtx.Err() == nil {
			cp.log.Error(err, "Sync of the default ServiceCIDR failed")
		}
		_ = r.Start(runCtx)
	}()
	return nil
}

// apiServerClient is a typed client of the API server's own identity
// (system:apiserver, system:masters), for the loops the API server runs.
func (cp *ControlPlane) apiServerClient() (*client.Client, error) {
	cfg, err := cp.ClientConfig("system:apiserver")
	if err != nil {
		return nil, err
	}
	sch, err := all.NewScheme()
	if err != nil {
		return nil, fmt.Errorf("build scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: sch})
	if err != nil {
		return nil, fmt.Errorf("create the API server's own client: %w", err)
	}
	return c, nil
}
