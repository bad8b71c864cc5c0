package cli

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/builtin/node/cri/containerd/daemon"
	"github.com/converge-dev/converge/builtin/node/image"
)

type imageOptions struct {
	address   string
	namespace string
}

func (o *imageOptions) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.address, "address", daemon.Address(filepath.Join(defaultDataDir(), "node", "containerd")),
		"containerd socket (default: the one converge up --runtime containerd starts for its local node)")
	cmd.Flags().StringVar(&o.namespace, "namespace", image.DefaultNamespace, "containerd namespace receiving the image")
}

func newImageCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image",
		Short: "Build, import, pull, push, list and remove container images of the containerd runtime",
		Example: `  converge image build --binary ./hello --name hello --import
  converge image import hello.tar
  converge image push hello 127.0.0.1:5000/demo/hello:v1
  converge image pull 127.0.0.1:5000/demo/hello:v1
  converge image ls
  converge image rm 127.0.0.1:5000/demo/hello:v1`,
	}
	cmd.AddCommand(newImageImportCommand(g), newImageBuildCommand(g),
		newImageListCommand(g), newImagePullCommand(g), newImagePushCommand(g), newImageRemoveCommand(g))
	return cmd
}

func newImageImportCommand(g *globalOptions) *cobra.Command {
	o := &imageOptions{}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Import an OCI or `docker save` image archive into containerd",
		Example: `  converge image import hello.tar
  converge image import hello.tar --address /run/containerd/containerd.sock`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names, err := image.ImportFile(cmd.Context(), image.ImportFileOptions{Address: o.address, Namespace: o.namespace, Path: args[0]})
			if err != nil {
				return err
			}
			for _, n := range names {
				fmt.Fprintf(g.stdout, "Imported %s\n", n)
			}
			return nil
		},
	}
	o.flags(cmd)
	return cmd
}

func newImageBuildCommand(g *globalOptions) *cobra.Command {
	o := &imageOptions{}
	var binary, name, inPath, out string
	var entrypoint, args, links, files []string
	var doImport bool
	cmd := &cobra.Command{
		Use:   "build --binary PATH --name NAME",
		Short: "Pack a static binary into an OCI image archive (and optionally import it)",
		Example: `  CGO_ENABLED=0 go build -o hello ./cmd/hello
  converge image build --binary hello --name hello -o hello.tar
  converge image build --binary hello --name example.com/demo/hello:v1 --import
  converge image build --binary /bin/busybox --name busybox --entrypoint "" --cmd sh --link /bin/sh=busybox`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if binary == "" || name == "" {
				return fmt.Errorf("--binary and --name are required (e.g. --binary ./hello --name hello)")
			}
			var buf bytes.Buffer
			opts := image.BuildOptions{Binary: binary, Name: name, Path: inPath, Cmd: args, Out: &buf}
			if cmd.Flags().Changed("entrypoint") {
				// --entrypoint "" alone: no entrypoint, only --cmd.
				opts.Entrypoint = slices.DeleteFunc(slices.Clone(entrypoint), func(s string) bool { return s == "" })
				if opts.Entrypoint == nil {
					opts.Entrypoint = []string{}
				}
			}
			var err error
			if opts.Links, err = keyValues("--link", "LINK=TARGET, e.g. /bin/sh=busybox", links, false); err != nil {
				return err
			}
			if opts.Files, err = keyValues("--file", "HOST_PATH=IMAGE_PATH, e.g. /bin/busybox=/bin/busybox", files, true); err != nil {
				return err
			}
			res, err := image.Build(cmd.Context(), opts)
			if err != nil {
				return err
			}
			file := out
			if file == "" && !doImport {
				base := path.Base(res.Name)
				if i := strings.LastIndex(base, ":"); i > 0 {
					base = base[:i]
				}
				file = base + ".tar"
			}
			if file != "" {
				if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
					return fmt.Errorf("write %s: %w", file, err)
				}
				fmt.Fprintf(g.stdout, "Built %s %s -> %s\n", res.Name, res.Manifest.Digest, file)
			} else {
				fmt.Fprintf(g.stdout, "Built %s %s\n", res.Name, res.Manifest.Digest)
			}
			if !doImport {
				return nil
			}
			tmp, err := os.CreateTemp("", "converge-image-*.tar")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			if _, err := tmp.Write(buf.Bytes()); err != nil {
				tmp.Close()
				return err
			}
			tmp.Close()
			names, err := image.ImportFile(cmd.Context(), image.ImportFileOptions{Address: o.address, Namespace: o.namespace, Path: tmp.Name()})
			if err != nil {
				return err
			}
			for _, n := range names {
				fmt.Fprintf(g.stdout, "Imported %s\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&binary, "binary", "", "a statically linked Linux executable (CGO_ENABLED=0 go build)")
	cmd.Flags().StringVar(&name, "name", "", "image reference, e.g. hello or example.com/demo/hello:v1")
	cmd.Flags().StringVar(&inPath, "path", "", "where the binary lands in the image (default /bin/<binary name>)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "archive file to write (default <name>.tar unless --import)")
	cmd.Flags().BoolVar(&doImport, "import", false, "import the image into containerd")
	cmd.Flags().StringArrayVar(&entrypoint, "entrypoint", nil, "the image's entrypoint, one flag per word (default the binary's path; \"\" for none)")
	cmd.Flags().StringArrayVar(&args, "cmd", nil, "the image's default arguments, one flag per word")
	cmd.Flags().StringArrayVar(&files, "file", nil, "another host file in the image, HOST_PATH=IMAGE_PATH (repeatable), e.g. /bin/busybox=/bin/busybox")
	cmd.Flags().StringArrayVar(&links, "link", nil, "a symbolic link in the image, LINK=TARGET (repeatable), e.g. /bin/sh=busybox")
	o.flags(cmd)
	return cmd
}

// keyValues parses a repeatable KEY=VALUE flag into a map (nil when empty);
// swap keys the map by the value (--file HOST=IMAGE is keyed by IMAGE).
func keyValues(flag, want string, vals []string, swap bool) (map[string]string, error) {
	var m map[string]string
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("%s %q: want %s", flag, v, want)
		}
		if swap {
			k, val = val, k
		}
		if m == nil {
			m = map[string]string{}
		}
		m[k] = val
	}
	return m, nil
}
