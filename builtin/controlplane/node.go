package controlplane

import (
	"context"
	"fmt"
	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/framework/client"
	"os"
	"path/filepath"
	"time"

	"github.com/converge-dev/converge/builtin/node"
	"github.com/converge-dev/converge/builtin/node/proxy"
	"github.com/converge-dev/converge/builtin/node/runtime/process"
	"github.com/converge-dev/converge/builtin/node/simulated"
	securitynode "github.com/converge-dev/converge/builtin/security/node"
	"github.com/converge-dev/converge/builtin/security/rbac"
)

// startNodes runs the local node agent on the process runtime (with the service
// proxy) and the simulated nodes, each a client of this control plane's API
// server like a remote agent would be.
func (cp *ControlPlane) startNodes(ctx context.Context) error {
	opts := cp.opts
	if opts.LocalNode {
		t0 := time.Now()
		cfg, err := cp.componentConfig(securitynode.UserPrefix+cp.nodeName(), securitynode.Group)
		if err != nil {
			return err
		}
		root := filepath.Join(opts.DataDir, "node")
		if err := os.MkdirAll(root, 0o700); err != nil {
			return fmt.Errorf("create node dir: %w", err)
		}
		logTLS, err := cp.nodeLogTLS("127.0.0.1", "localhost")
		if err != nil {
			return err
		}
		agent, err := node.New(node.Options{
			NodeName: cp.nodeName(), Config: cfg, RootDir: root, Logger: cp.log.WithName("node"), PodCIDR: opts.PodCIDR, LogTLS: logTLS,
			Runtime: process.New(process.Options{Logger: cp.log.WithName("process-runtime"), StateDir: filepath.Join(root, "containers")}),
		})
		if err != nil {
			return fmt.Errorf("create node agent: %w", err)
		}
		cp.wg.Add(1)
		go func() {
			defer cp.wg.Done()
			if err := agent.Start(ctx); err != nil && ctx.Err() == nil {
				cp.errCh <- fmt.Errorf("node agent: %w", err)
			}
		}()
		pcfg, err := cp.componentConfig(rbac.ProxyUser)
		if err != nil {
			return err
		}
		sch, err := all.NewScheme()
		if err != nil {
			return err
		}
		pc, err := client.New(pcfg, client.Options{Scheme: sch})
		if err != nil {
			return fmt.Errorf("create service proxy client: %w", err)
		}
		p, err := proxy.New(proxy.Options{Client: pc, Logger: cp.log.WithName("proxy")})
		if err != nil {
			return fmt.Errorf("create service proxy: %w", err)
		}
		cp.wg.Add(1)
		go func() {
			defer cp.wg.Done()
			if err := p.Start(ctx); err != nil && ctx.Err() == nil {
				cp.log.Error(err, "Service proxy stopped")
			}
		}()
		opts.Progress("node", time.Since(t0))
	}
	if opts.SimulatedNodes > 0 {
		t0 := time.Now()
		cfg, err := cp.ClientConfig("system:node:simulated")
		if err != nil {
			return err
		}
		fleet, err := simulated.New(simulated.Options{Config: cfg, Nodes: opts.SimulatedNodes, Logger: cp.log.WithName("simulated")})
		if err != nil {
			return fmt.Errorf("create simulated nodes: %w", err)
		}
		cp.wg.Add(1)
		go func() {
			defer cp.wg.Done()
			if err := fleet.Start(ctx); err != nil && ctx.Err() == nil {
				cp.log.Error(err, "Simulated nodes stopped")
			}
		}()
		opts.Progress("sim-nodes", time.Since(t0))
	}
	return nil
}

func (cp *ControlPlane) nodeName() string {
	if cp.opts.NodeName != "" {
		return cp.opts.NodeName
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "converge-node"
}
