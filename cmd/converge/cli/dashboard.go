package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/framework/client/rest"
)

func newDashboardCommand(g *globalOptions) *cobra.Command {
	var urlOnly bool
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Open the web dashboard as the kubeconfig's user",
		Long: `Open the web dashboard that the API server serves under /ui/, logged in as
the kubeconfig's user: the command asks the server for a one-time login link
with the kubeconfig's credentials and opens it in a browser (or prints it with
--url). The link works once, for a few minutes, and becomes a browser session
of at most 8 hours.

A user with a bearer token browses with that token. A user with a client
certificate browses with a token the API server issues for the same identity
(user and groups), valid while the browser session lasts. Either way the API
server authenticates and authorizes every request the dashboard makes, so RBAC
decides what the user sees and may do.`,
		Example: `  converge dashboard
  converge dashboard --url`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := g.connect()
			if err != nil {
				return err
			}
			resp, err := s.rest.Do(cmd.Context(), rest.Request{Method: http.MethodPost, Path: "/ui/login/code"})
			if err != nil {
				return s.explain(fmt.Errorf("ask for a dashboard login link: %w", err))
			}
			var got struct{ Path, User string }
			if err := json.Unmarshal(resp.Body, &got); err != nil || got.Path == "" {
				return fmt.Errorf("ask for a dashboard login link: unexpected answer %q", resp.Body)
			}
			link := strings.TrimSuffix(s.rest.Host(), "/") + got.Path
			if urlOnly {
				fmt.Fprintln(g.stdout, link)
				return nil
			}
			fmt.Fprintf(g.stdout, "Opening the dashboard as %s (one-time link, valid a few minutes):\n%s\n", got.User, link)
			if err := openBrowser(link); err != nil {
				fmt.Fprintf(g.stderr, "Could not open a browser (%v): open the link above yourself\n", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&urlOnly, "url", false, "print the one-time login link instead of opening a browser")
	return cmd
}

// openBrowser opens url with the desktop's handler.
func openBrowser(url string) error {
	name, args := "xdg-open", []string{url}
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name, args = "rundll32", []string{"url.dll,FileProtocolHandler", url}
	}
	cmd := exec.Command(name, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
