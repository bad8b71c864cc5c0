package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// WriteReference writes the Markdown CLI reference (docs/cli.md) of the command
// tree: every command with its description, usage, examples and flags. Paths
// under the user's home directory in flag defaults are shown as "~", so the
// output does not depend on the machine.
func WriteReference(w io.Writer) error {
	root := newRoot(&globalOptions{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }})
	var b strings.Builder
	b.WriteString("# converge CLI reference\n\n")
	b.WriteString("<!-- Generated from the cobra command tree by `go test ./cmd/converge/cli -run TestCLIReference -update`. Do not edit. -->\n\n")
	fmt.Fprintf(&b, "%s\n\n", root.Long)
	b.WriteString("Commands:\n\n")
	for _, c := range visible(root) {
		fmt.Fprintf(&b, "- [`%s`](#%s) — %s\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	b.WriteString("\nExit codes: 0 on success, 1 on any error; errors are printed on stderr.\n")
	b.WriteString("Colors are used only on terminals, and never when `NO_COLOR` is set.\n\n")
	b.WriteString("## Global flags\n\nEvery command accepts these:\n\n```\n")
	b.WriteString(root.PersistentFlags().FlagUsages())
	b.WriteString("```\n")
	for _, c := range visible(root) {
		writeCommand(&b, c)
	}
	text := b.String()
	if home, err := os.UserHomeDir(); err == nil && home != "" && home != "/" {
		text = strings.ReplaceAll(text, home+"/", "~/")
	}
	_, err := io.WriteString(w, text)
	return err
}

func visible(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		out = append(out, c)
		out = append(out, visible(c)...)
	}
	return out
}

func anchor(path string) string { return strings.ReplaceAll(path, " ", "-") }

func writeCommand(b *strings.Builder, c *cobra.Command) {
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n", c.CommandPath(), c.Short)
	if c.Long != "" {
		fmt.Fprintf(b, "%s\n\n", c.Long)
	}
	fmt.Fprintf(b, "```\n%s\n```\n", c.UseLine())
	if c.Example != "" {
		fmt.Fprintf(b, "\n### Examples\n\n```\n%s\n```\n", c.Example)
	}
	if flags := c.LocalNonPersistentFlags().FlagUsages(); flags != "" {
		fmt.Fprintf(b, "\n### Flags\n\n```\n%s```\n", flags)
	}
}
