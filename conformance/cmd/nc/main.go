// Command nc is the conformance run's stand-in for the netcat
// (netcat-openbsd) of upstream agnhost's Alpine userland: the e2e specs exec
// `nc` in agnhost pods to reach pods and Services over TCP and UDP, and
// Debian's busybox nc has no -u. It speaks the subset they use: nc [-t|-u]
// [-v] [-z] [-w SECS] [-p LOCALPORT] HOST PORT. Standard input goes to the
// peer (each read one datagram over UDP); what the peer sends goes to
// standard output until it closes the connection or, with -w, nothing came
// for that long. It exits 1 when it cannot connect, 0 otherwise.
// hack/conformance.sh packs it into the agnhost image as /usr/bin/nc for
// RUNTIME=containerd.
package main

import (
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is nc with args; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parse(args)
	if err != nil {
		_, _ = io.WriteString(stderr, "nc: "+err.Error()+"\nusage: nc [-t|-u] [-v] [-z] [-w secs] [-p port] host port\n")
		return 1
	}
	if err := o.talk(stdin, stdout, stderr); err != nil {
		_, _ = io.WriteString(stderr, "nc: "+err.Error()+"\n")
		return 1
	}
	return 0
}
