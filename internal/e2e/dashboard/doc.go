// Package dashboard is the web dashboard's acceptance in a real browser:
// Debian's chromium, headless, driven through the Chrome DevTools Protocol
// (chromedp) against a secure control plane with the process runtime, all
// controllers and the scheduler. The specs do what a user does — log in with
// the link converge up prints, watch a Deployment's pods become Ready after
// kubectl apply, scale it, follow a pod's logs, see the API server's 422 when
// an edit is invalid, see a custom resource's printer columns, and, as a user
// bound to the view ClusterRole, see why scaling is refused and that Secrets
// may not be listed. Run with -update-screenshots to refresh docs/dashboard/.
package dashboard
