// Command curl is the conformance run's stand-in for the curl of upstream
// agnhost's Alpine userland: the e2e specs exec `curl` in agnhost pods to
// reach other pods and Services. It speaks the subset of curl's command line
// they use: one URL, -g, -q, -s, -S, -k, -f, -v (accepted), -o FILE,
// -w FORMAT (%{http_code} and \n), --interface ADDR, --connect-timeout SECS, -m/--max-time
// SECS, -X METHOD, -H HEADER, -d DATA; and curl's exit codes: 0, 2 (bad
// usage), 6 (host not resolved), 7 (no connection), 22 (-f and an HTTP error),
// 28 (timeout), 56 (receive failure). hack/conformance.sh packs it into the
// agnhost image as /usr/bin/curl for RUNTIME=containerd.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is curl with args, writing the body to stdout and errors to stderr
// (unless silent); it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "curl: %v\n", err)
		return 2
	}
	code, err := o.fetch(stdout)
	if err != nil && (!o.silent || o.showErrors) {
		fmt.Fprintf(stderr, "curl: (%d) %v\n", code, err)
	}
	return code
}
