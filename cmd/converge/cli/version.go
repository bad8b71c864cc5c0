package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCommand(g *globalOptions) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the converge version",
		Example: "  converge version\n  converge version -o json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := map[string]string{"version": "devel", "goVersion": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH}
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v["version"] = bi.Main.Version
			}
			switch output {
			case "json":
				b, _ := json.MarshalIndent(v, "", "  ")
				fmt.Fprintln(g.stdout, string(b))
			case "":
				fmt.Fprintf(g.stdout, "converge %s (%s, %s)\n", v["version"], v["goVersion"], v["platform"])
			default:
				return fmt.Errorf("unknown output format %q: use json or leave it out", output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json")
	return cmd
}
