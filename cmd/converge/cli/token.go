package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/builtin/security/bootstrap"
)

func newTokenCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "token",
		Short:   "Manage bootstrap tokens that let nodes join a secure control plane",
		Example: `  converge token create --print-join-command`,
		Args:    cobra.NoArgs,
	}
	var ttl time.Duration
	var description string
	var printJoin bool
	create := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token (a Secret in kube-system) and print it",
		Long: `Create a bootstrap token: a Secret bootstrap-token-ID of type
bootstrap.kubernetes.io/token in kube-system. A node agent started with
` + "`converge node --server URL --token TOKEN --ca-cert-hash HASH`" + ` uses it to ask for
its client certificate, which the control plane approves and signs
automatically. Needs a secure control plane (the default; not converge up --insecure) and the
admin kubeconfig.`,
		Example: `  converge token create
  converge token create --ttl 1h --print-join-command`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.connect()
			if err != nil {
				return err
			}
			token, err := bootstrap.NewToken()
			if err != nil {
				return err
			}
			secret, err := bootstrap.NewSecret(token, description, ttl, time.Now(), bootstrap.DefaultExtraGroup)
			if err != nil {
				return err
			}
			if err := s.client.Create(cmd.Context(), secret); err != nil {
				return s.explain(fmt.Errorf("create bootstrap token secret: %w", err))
			}
			if !printJoin {
				fmt.Fprintln(g.stdout, token)
				return nil
			}
			ca := s.cfg.TLS.CAData
			if len(ca) == 0 && s.cfg.TLS.CAFile != "" {
				if ca, err = os.ReadFile(s.cfg.TLS.CAFile); err != nil {
					return fmt.Errorf("read the CA of the kubeconfig: %w", err)
				}
			}
			if len(ca) == 0 {
				return fmt.Errorf("the kubeconfig has no CA certificate: was the control plane started with --insecure?")
			}
			hash, err := bootstrap.CACertHash(ca)
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "converge node --server %s --token %s --ca-cert-hash %s\n", s.cfg.Host, token, hash)
			return nil
		},
	}
	f := create.Flags()
	f.DurationVar(&ttl, "ttl", 24*time.Hour, "how long the token is valid (0: forever)")
	f.StringVar(&description, "description", "", "a human-readable description stored with the token")
	f.BoolVar(&printJoin, "print-join-command", false, "print the full `converge node` command that joins with the token")
	cmd.AddCommand(create)
	return cmd
}
