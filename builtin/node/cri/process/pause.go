package process

import (
	"os"
	"os/signal"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/converge-dev/converge/builtin/node/cri"
)

// The pause container. Every Kubernetes pod sandbox runs the pause image
// (registry.k8s.io/pause:3.10), a program that only waits for a signal, and
// specs use it wherever a container must merely exist. Its entrypoint is not
// a host command, so the process runtime runs its own stand-in: the running
// binary itself (/proc/self/exe), re-executed with pauseEnv set, which the
// init below turns into a process that waits and exits 0 on SIGTERM or
// SIGINT. Any binary that links this package (converge, a test binary) can
// therefore be the pause process, and no host program is needed.

// pauseEnv marks the re-executed binary as a pause process.
const pauseEnv = "CONVERGE_PROCESS_RUNTIME_PAUSE"

// pauseArg0 is the stand-in's argv[0], as the pause image's entrypoint.
const pauseArg0 = "/pause"

func init() {
	if os.Getenv(pauseEnv) != "1" || len(os.Args) == 0 || os.Args[0] != pauseArg0 {
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	os.Exit(0)
}

// IsPauseImage reports whether image is a pause image: one whose repository's
// last path element is "pause" (or "pause-ARCH", the older per-architecture
// names), whatever its registry, tag or digest.
func IsPauseImage(image string) bool {
	name, _, _ := strings.Cut(image, "@")
	repo := path.Base(name)
	if i := strings.LastIndexByte(repo, ':'); i >= 0 {
		repo = repo[:i]
	}
	return repo == "pause" || strings.HasPrefix(repo, "pause-")
}

// withPause returns spec, set to run the pause stand-in when its image is a
// pause image and it names no command (or the image's own, /pause).
func withPause(spec cri.ContainerSpec) cri.ContainerSpec {
	if !IsPauseImage(spec.Image) || !(len(spec.Args) == 0 || len(spec.Args) == 1 && spec.Args[0] == pauseArg0) {
		return spec
	}
	spec.Args = []string{pauseArg0}
	spec.Env = append(append([]string{}, spec.Env...), pauseEnv+"=1")
	return spec
}

// isPause reports whether spec (after withPause) runs the pause stand-in.
func isPause(spec cri.ContainerSpec) bool {
	return len(spec.Args) == 1 && spec.Args[0] == pauseArg0 && slices.Contains(spec.Env, pauseEnv+"=1")
}
