package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/builtin/node/cri"
	"github.com/converge-dev/converge/controlplane"
)

// registryOptions are the login and registries config of pull and push.
type registryOptions struct {
	registries         string
	username, password string
}

func (o *registryOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.registries, "registries", "", "registries config (k3s registries.yaml shape: mirrors, configs with auth and tls)")
	cmd.Flags().StringVar(&o.username, "username", "", "registry user name (basic auth or token login)")
	cmd.Flags().StringVar(&o.password, "password", "", "registry password (with --username)")
}

// credentials is the --username/--password login for ref's registry.
func (o *registryOptions) credentials(ref string) []cri.Credential {
	if o.username == "" {
		return nil
	}
	return []cri.Credential{{Host: cri.RegistryHost(ref), Username: o.username, Password: o.password}}
}

// runtime connects to containerd the way the containerd runtime does.
func (o *imageOptions) runtime(ctx context.Context, ro *registryOptions) (controlplane.ImageStore, error) {
	opts := controlplane.ImageStoreOptions{Address: o.address, Namespace: o.namespace}
	if ro != nil {
		opts.RegistriesFile = ro.registries
	}
	return controlplane.OpenImageStore(ctx, opts)
}

func newImageListCommand(g *globalOptions) *cobra.Command {
	o := &imageOptions{}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List the images containerd holds",
		Example: `  converge image ls
  converge image ls --address /run/containerd/containerd.sock --namespace k8s.io`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt, err := o.runtime(cmd.Context(), nil)
			if err != nil {
				return err
			}
			defer rt.Close()
			imgs, err := rt.ListImages(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 8, 3, ' ', 0)
			fmt.Fprintln(tw, "IMAGE\tID\tSIZE")
			for _, img := range imgs {
				id := strings.TrimPrefix(img.ID, "sha256:")
				if len(id) > 12 {
					id = id[:12]
				}
				for _, n := range img.Names {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", n, id, byteSize(img.Size))
				}
			}
			return tw.Flush()
		},
	}
	o.flags(cmd)
	return cmd
}

func newImagePullCommand(g *globalOptions) *cobra.Command {
	o, ro := &imageOptions{}, &registryOptions{}
	cmd := &cobra.Command{
		Use:   "pull IMAGE",
		Short: "Pull an image from a registry into containerd (loopback registries over plain HTTP)",
		Example: `  converge image pull 127.0.0.1:5000/demo/hello:v1
  converge image pull registry.example.com/team/app:v2 --username alice --password s3cret
  converge image pull busybox:1.36 --registries /etc/converge/registries.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := o.runtime(cmd.Context(), ro)
			if err != nil {
				return err
			}
			defer rt.Close()
			res, err := rt.PullImage(cmd.Context(), args[0], ro.credentials(args[0]))
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Pulled %s %s (%s) in %v\n", res.Image.Names[0], res.Image.ID, byteSize(res.Image.Size), res.Duration.Round(1e6))
			return nil
		},
	}
	o.flags(cmd)
	ro.flags(cmd)
	return cmd
}

func newImagePushCommand(g *globalOptions) *cobra.Command {
	o, ro := &imageOptions{}, &registryOptions{}
	cmd := &cobra.Command{
		Use:   "push IMAGE [DESTINATION]",
		Short: "Push a local image to a registry, under another name when DESTINATION is given",
		Example: `  converge image build --binary ./hello --name hello --import
  converge image push hello 127.0.0.1:5000/demo/hello:v1
  converge image push registry.example.com/team/app:v2 --username alice --password s3cret`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			dst := args[0]
			if len(args) == 2 {
				dst = args[1]
			}
			rt, err := o.runtime(cmd.Context(), ro)
			if err != nil {
				return err
			}
			defer rt.Close()
			img, err := rt.Push(cmd.Context(), args[0], dst, ro.credentials(dst))
			if err != nil {
				return err
			}
			fmt.Fprintf(g.stdout, "Pushed %s %s\n", img.Names[0], img.Digest)
			return nil
		},
	}
	o.flags(cmd)
	ro.flags(cmd)
	return cmd
}

func newImageRemoveCommand(g *globalOptions) *cobra.Command {
	o := &imageOptions{}
	cmd := &cobra.Command{
		Use:     "rm IMAGE...",
		Aliases: []string{"remove"},
		Short:   "Remove images from containerd, by name or by ID (all its names)",
		Example: `  converge image rm 127.0.0.1:5000/demo/hello:v1
  converge image rm hello sha256:4f1c…`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rt, err := o.runtime(cmd.Context(), nil)
			if err != nil {
				return err
			}
			defer rt.Close()
			for _, ref := range args {
				if _, ok, err := rt.ImageStatus(cmd.Context(), ref); err != nil {
					return err
				} else if !ok && !strings.HasPrefix(ref, "sha256:") {
					return fmt.Errorf("image %q not found", ref)
				}
				if err := rt.RemoveImage(cmd.Context(), ref); err != nil {
					return err
				}
				fmt.Fprintf(g.stdout, "Removed %s\n", ref)
			}
			return nil
		},
	}
	o.flags(cmd)
	return cmd
}

// byteSize formats a size in bytes for people (1.9 MB).
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
