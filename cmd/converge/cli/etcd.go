package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
)

func newEtcdCommand(g *globalOptions) *cobra.Command {
	o := etcdstore.MemberOptions{}
	var peerCA string
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Run an etcd member (of a cluster that API servers reach with --etcd-servers)",
		Example: `  # A three-member cluster on one machine
  converge etcd --name a --data-dir /var/lib/cv/a --listen-client-url http://127.0.0.11:2379 --listen-peer-url http://127.0.0.11:2380 \
    --initial-cluster a=http://127.0.0.11:2380,b=http://127.0.0.12:2380,c=http://127.0.0.13:2380
  converge etcd snapshot save backup.db --endpoints http://127.0.0.11:2379`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.PeerCAFile = peerCA
			return etcdstore.RunMember(cmd.Context(), o, func(m *etcdstore.Embedded) {
				fmt.Fprintf(g.stdout, "etcd member %s ready: clients %s, peers %s\n", m.Name(), strings.Join(m.Endpoints(), ","), m.PeerURL())
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Name, "name", "converge", "member name")
	f.StringVar(&o.Dir, "data-dir", "", "member data directory (required)")
	f.StringVar(&o.ClientURL, "listen-client-url", "http://127.0.0.1:2379", "URL clients (API servers) connect to")
	f.StringVar(&o.PeerURL, "listen-peer-url", "http://127.0.0.1:2380", "URL the other members connect to")
	f.StringVar(&o.InitialCluster, "initial-cluster", "", "every member as name=peerURL,... (default: this member alone)")
	f.StringVar(&o.InitialClusterState, "initial-cluster-state", etcdstore.ClusterStateNew, "new, or existing to rejoin")
	f.StringVar(&o.InitialClusterToken, "initial-cluster-token", etcdstore.DefaultClusterToken, "token shared by the cluster's members")
	f.StringVar(&o.ClientCertFile, "cert-file", "", "TLS certificate for clients")
	f.StringVar(&o.ClientKeyFile, "key-file", "", "TLS key for clients")
	f.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA verifying client certificates")
	f.StringVar(&o.PeerCertFile, "peer-cert-file", "", "TLS certificate for peers")
	f.StringVar(&o.PeerKeyFile, "peer-key-file", "", "TLS key for peers")
	f.StringVar(&peerCA, "peer-ca-file", "", "CA verifying peer certificates")
	f.StringVar(&o.LogLevel, "log-level", "", "etcd log level (debug, info, warn, error)")
	f.BoolVar(&o.NoFsync, "unsafe-no-fsync", false, "disable fsync (tests only: loses data on a crash)")
	_ = f.MarkHidden("unsafe-no-fsync")
	cmd.AddCommand(newEtcdSnapshotCommand(g))
	return cmd
}

func newEtcdSnapshotCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save and restore etcd snapshots (backup of the whole control plane)",
		Example: `  converge etcd snapshot save backup.db --endpoints http://127.0.0.1:2379
  converge etcd snapshot restore backup.db --data-dir /var/lib/cv/restored`,
	}
	var endpoints []string
	var caFile, certFile, keyFile string
	save := &cobra.Command{
		Use:     "save PATH",
		Short:   "Write a consistent snapshot of one member to PATH",
		Example: `  converge etcd snapshot save backup.db --endpoints http://127.0.0.1:2379`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(endpoints) == 0 {
				return fmt.Errorf("--endpoints is required (the client URL of an etcd member)")
			}
			c, err := etcdstore.Connect(cmd.Context(), etcdstore.ExternalOptions{Endpoints: endpoints[:1], CAFile: caFile, CertFile: certFile, KeyFile: keyFile})
			if err != nil {
				return err
			}
			defer c.Close()
			info, err := etcdstore.SaveSnapshot(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Saved %s: %d bytes, revision %d, sha256 %s (etcd %s) in %s\n",
				info.Path, info.Size, info.Revision, info.SHA256, info.EtcdVersion, info.Took.Round(1e6))
			return nil
		},
	}
	save.Flags().StringSliceVar(&endpoints, "endpoints", nil, "etcd client URL(s); the first is snapshotted")
	save.Flags().StringVar(&caFile, "cacert", "", "CA verifying the member")
	save.Flags().StringVar(&certFile, "cert", "", "client certificate")
	save.Flags().StringVar(&keyFile, "key", "", "client key")
	ro := etcdstore.RestoreOptions{}
	restore := &cobra.Command{
		Use:   "restore PATH --data-dir DIR",
		Short: "Restore a snapshot into a new member data directory",
		Example: `  converge etcd snapshot restore backup.db --data-dir /var/lib/cv/restored
  converge up --data-dir /var/lib/cv   # after moving restored/ to /var/lib/cv/etcd`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			ro.SnapshotPath = args[0]
			if ro.DataDir == "" {
				return fmt.Errorf("--data-dir is required (a new, empty directory)")
			}
			if err := etcdstore.RestoreCluster(ro); err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Restored %s into %s as member %s\n", ro.SnapshotPath, ro.DataDir, ro.Name)
			return nil
		},
	}
	restore.Flags().StringVar(&ro.DataDir, "data-dir", "", "new member data directory (must be empty)")
	restore.Flags().StringVar(&ro.Name, "name", etcdstore.DefaultMemberName, "restored member's name")
	restore.Flags().StringVar(&ro.PeerURL, "initial-advertise-peer-url", "http://127.0.0.1:2380", "restored member's peer URL")
	restore.Flags().StringVar(&ro.InitialCluster, "initial-cluster", "", "all members of the restored cluster as name=peerURL")
	restore.Flags().StringVar(&ro.InitialClusterToken, "initial-cluster-token", "", "token of the restored cluster")
	cmd.AddCommand(save, restore)
	return cmd
}
