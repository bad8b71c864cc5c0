package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/builtin/node/cri"
)

func TestTerminationMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	log := write("0.log", "2026-01-02T03:04:05Z stdout F first\n2026-01-02T03:04:06Z stderr P last\n")
	big := write("big", strings.Repeat("a", 10)+strings.Repeat("b", maxTerminationMessage))
	empty := write("empty", "")
	spec := func(host string) cri.ContainerSpec {
		s := cri.ContainerSpec{LogPath: log}
		if host != "" {
			s.Mounts = []cri.Mount{{HostPath: host, ContainerPath: "/dev/termination-log"}}
		}
		return s
	}
	ctr := func(policy corev1.TerminationMessagePolicy) corev1.Container {
		return corev1.Container{TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: policy}
	}
	cases := []struct {
		name string
		c    corev1.Container
		spec cri.ContainerSpec
		code int
		want string
	}{
		{"file", ctr(corev1.TerminationMessageReadFile), spec(write("msg", "DONE")), 1, "DONE"},
		{"file keeps its last 4096 bytes", ctr(corev1.TerminationMessageReadFile), spec(big), 0, strings.Repeat("b", maxTerminationMessage)},
		{"empty file, policy File", ctr(corev1.TerminationMessageReadFile), spec(empty), 1, ""},
		{"empty file, fallback on failure", ctr(corev1.TerminationMessageFallbackToLogsOnError), spec(empty), 1, "first\nlast"},
		{"empty file, fallback on success", ctr(corev1.TerminationMessageFallbackToLogsOnError), spec(empty), 0, ""},
		{"file wins over the log", ctr(corev1.TerminationMessageFallbackToLogsOnError), spec(write("msg2", "OK")), 1, "OK"},
		{"no mount, fallback", ctr(corev1.TerminationMessageFallbackToLogsOnError), spec(""), 2, "first\nlast"},
		{"missing file, fallback", ctr(corev1.TerminationMessageFallbackToLogsOnError), spec(filepath.Join(dir, "gone")), 2, "first\nlast"},
		{"no path", corev1.Container{TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError}, spec(""), 2, "first\nlast"},
	}
	for _, c := range cases {
		if got := terminationMessage(t.Context(), c.c, c.spec, c.code); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCapTerminationMessages(t *testing.T) {
	t.Parallel()
	shared := &corev1.ContainerStateTerminated{Message: strings.Repeat("x", 5000)}
	statuses := []corev1.ContainerStatus{
		{State: corev1.ContainerState{Terminated: shared}},
		{LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Message: "short"}}},
	}
	capTerminationMessages(3, statuses)
	if got := len(statuses[0].State.Terminated.Message); got != maxPodTerminationMessage/3 {
		t.Errorf("cut to %d bytes, want %d", got, maxPodTerminationMessage/3)
	}
	if len(shared.Message) != 5000 {
		t.Error("the runner's own state was changed")
	}
	if statuses[1].LastTerminationState.Terminated.Message != "short" {
		t.Error("a short message changed")
	}
}
