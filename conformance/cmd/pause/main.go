// Command pause is the conformance run's stand-in for registry.k8s.io/pause: a
// static program that sleeps until SIGTERM or SIGINT and exits 0, as the
// upstream pause container does. hack/conformance.sh packs it into an image
// with `converge image build` for RUNTIME=containerd.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	os.Exit(0)
}
