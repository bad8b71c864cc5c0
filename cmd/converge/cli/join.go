package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"

	"github.com/converge-dev/converge/builtin/security/bootstrap"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
)

// joinOptions are the `converge node` flags of the bootstrap token join.
type joinOptions struct {
	server, token, caHash, caFile string
}

// joinedConfig returns the node's client configuration for a join: the
// kubeconfig a previous join wrote under rootDir when there is one, otherwise
// a new node client certificate obtained with the bootstrap token, saved there.
func joinedConfig(ctx context.Context, o joinOptions, name, rootDir string, log logr.Logger) (*client.Config, error) {
	path := filepath.Join(rootDir, "kubeconfig")
	if _, err := os.Stat(path); err == nil {
		env := kubeconfig.DefaultEnvironment()
		cfg, _, err := env.Load(path, "")
		if err != nil {
			return nil, fmt.Errorf("load the node kubeconfig of a previous join %s: %w", path, err)
		}
		log.Info("Using the credentials of a previous join", "kubeconfig", path)
		return cfg, nil
	}
	if o.server == "" || o.token == "" {
		return nil, fmt.Errorf("--server and --token are both needed to join")
	}
	opts := bootstrap.JoinOptions{Server: o.server, Token: o.token, CACertHash: o.caHash, NodeName: name, Logger: log}
	if o.caFile != "" {
		ca, err := os.ReadFile(o.caFile)
		if err != nil {
			return nil, fmt.Errorf("read --certificate-authority: %w", err)
		}
		opts.CAPEM = ca
	}
	creds, err := bootstrap.Join(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(rootDir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", rootDir, err)
	}
	if err := pki.WriteKubeconfig(path, o.server, "converge", creds.CAPEM, creds.CertPEM, creds.KeyPEM, ""); err != nil {
		return nil, fmt.Errorf("write the node kubeconfig: %w", err)
	}
	log.Info("Joined: node client certificate issued", "node", name, "kubeconfig", path)
	return creds.Config(o.server), nil
}
