package cli

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/client/kubeconfig"
)

func newCertsCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "certs",
		Short:   "Manage the certificates of a secure control plane (<data-dir>/pki)",
		Example: `  converge certs rotate --data-dir ~/.converge`,
		Args:    cobra.NoArgs,
	}
	var dataDir string
	rotate := &cobra.Command{
		Use:   "rotate",
		Short: "Renew the serving and admin certificates now (the CA and the ServiceAccount key are kept)",
		Long: `Renew the leaf certificates of <data-dir>/pki now, whatever their expiry: the
API server's serving certificate (keeping its names) and the admin client
certificate, then rewrite <data-dir>/kubeconfig with the new admin credentials.
The CA and the ServiceAccount signing key are kept, so every other certificate
and token stays valid. A running control plane picks the new serving
certificate up at its next hourly check (or restart); it also renews leaves
itself when a third of their validity is left.`,
		Example: `  converge certs rotate
  converge certs rotate --data-dir /var/lib/converge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := filepath.Join(dataDir, "pki")
			if _, err := os.Stat(filepath.Join(dir, pki.CACertFile)); err != nil {
				return fmt.Errorf("no CA in %s: was this control plane started with --insecure? (%w)", dir, err)
			}
			sans, err := servingSANs(filepath.Join(dir, pki.ServingCertFile))
			if err != nil {
				return err
			}
			before := map[string]time.Time{}
			for _, f := range []string{pki.ServingCertFile, pki.AdminCertFile} {
				if c, err := readCert(filepath.Join(dir, f)); err == nil {
					before[f] = c.NotAfter
				}
			}
			// RenewBefore beyond any validity makes every leaf "expiring".
			p, err := pki.Ensure(pki.Options{Dir: dir, ExtraSANs: sans, RenewBefore: 200 * 365 * 24 * time.Hour})
			if err != nil {
				return fmt.Errorf("renew certificates: %w", err)
			}
			for _, f := range []string{pki.ServingCertFile, pki.AdminCertFile} {
				c, err := readCert(filepath.Join(dir, f))
				if err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "renewed %-14s valid until %s (was %s)\n", f, c.NotAfter.UTC().Format(time.RFC3339), fmtTime(before[f]))
			}
			kc := filepath.Join(dataDir, "kubeconfig")
			cfg, _, err := kubeconfig.DefaultEnvironment().Load(kc, "")
			if err != nil {
				fmt.Fprintf(g.stdout, "no kubeconfig rewritten (%v)\n", err)
				return nil
			}
			if err := p.WriteAdminKubeconfig(kc, cfg.Host, "converge"); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "rewrote %s with the new admin certificate\n", kc)
			return nil
		},
	}
	rotate.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "data directory of the control plane")
	cmd.AddCommand(rotate)
	return cmd
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "missing"
	}
	return t.UTC().Format(time.RFC3339)
}

func readCert(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read certificate: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("read certificate %s: no PEM block", path)
	}
	return x509.ParseCertificate(block.Bytes)
}

// servingSANs are the names of the current serving certificate, kept on renewal.
func servingSANs(path string) ([]string, error) {
	c, err := readCert(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := append([]string(nil), c.DNSNames...)
	for _, ip := range c.IPAddresses {
		out = append(out, ip.String())
	}
	return out, nil
}
