package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newCompletionCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish",
		Short: "Print a shell completion script",
		Long: `Print the completion script for a shell. Load it in the current shell, or
install it where your shell looks for completions.`,
		Example: `  # bash, current shell / permanently
  source <(converge completion bash)
  converge completion bash > /etc/bash_completion.d/converge

  # zsh
  converge completion zsh > "${fpath[1]}/_converge"

  # fish
  converge completion fish > ~/.config/fish/completions/converge.fish`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(g.stdout, true)
			case "zsh":
				return root.GenZshCompletion(g.stdout)
			case "fish":
				return root.GenFishCompletion(g.stdout, true)
			}
			return fmt.Errorf("unknown shell %q: use bash, zsh or fish", args[0])
		},
	}
}
