package main

import (
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	type skipped = struct {
		Message string `xml:"message,attr"`
	}
	tests := []struct {
		name         string
		c            testCase
		wantSelected bool
		want         outcome
		wantDetail   string
	}{
		{"passed", testCase{Status: "passed"}, true, passed, ""},
		{"filtered out", testCase{Status: "skipped", Skipped: &skipped{"skipped"}}, false, 0, ""},
		{"skipped at run time", testCase{Status: "skipped", Skipped: &skipped{"skipped - Requires at least 2 nodes (not 1)"}},
			true, cannotRun, "skipped by the suite: Requires at least 2 nodes (not 1)"},
		{"failed", testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "\n[FAILED] services \"kubernetes\" not found\nIn [It] at: x.go:1"}},
			true, failed, "services \"kubernetes\" not found"},
		{"timed out", testCase{Status: "timedout", Failure: &failure{Type: "timedout", Description: "[TIMEDOUT] A suite timeout occurred"}},
			true, failed, "(timedout) A suite timeout occurred"},
		{"image in events", testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] Timed out after 300s.\nExpected Pod to be in <v1.PodPhase>: \"Running\""},
			SystemErr: "event: Failed: the process runtime runs `command`; image \"agnhost\" has no local entrypoint (set command)\n"},
			true, cannotRun, "a container has no command"},
		// The sample API server and the conversion webhook of
		// CustomResourceFieldSelectors (run 20261205T024314Z): the failure is
		// the Deployment's status, in It or in BeforeEach.
		{"deployment of an upstream image", testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] deploying extension apiserver in namespace aggregator-6869: error waiting for deployment \"sample-apiserver-deployment\" status to match expectation: deployment status: v1.DeploymentStatus{ObservedGeneration:1, Replicas:1, UpdatedReplicas:1, ReadyReplicas:0, AvailableReplicas:0, UnavailableReplicas:1, TerminatingReplicas:(*int32)(nil), Conditions:[]v1.DeploymentCondition{v1.DeploymentCondition{Type:\"Available\", Status:\"False\", Reason:\"MinimumReplicasUnavailable\"}}}\nIn [It] at: aggregator.go:356"},
			SystemErr: "event for sample-apiserver-deployment-74b66bf49-fr9gq: {kubelet vm} Failed: Error: runtime: invalid container spec: the process runtime runs `command`; image \"registry.k8s.io/e2e-test-images/sample-apiserver:1.29.2\" has no local entrypoint (set command)\n"},
			true, cannotRun, "a container has no command"},
		{"deployment of an upstream image, status without conditions", testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] waiting for sample-crd-conversion-webhook-deployment deployment status valid: error waiting for deployment \"sample-crd-conversion-webhook-deployment\" status to match expectation: deployment status: v1.DeploymentStatus{ObservedGeneration:1, Replicas:1, UpdatedReplicas:1, ReadyReplicas:0, UnavailableReplicas:1}\nIn [BeforeEach] at: crd_conversion_webhook.go:317"},
			SystemErr: "event: Failed: Error: runtime: invalid container spec: the process runtime runs `command`; image \"registry.k8s.io/e2e-test-images/agnhost:2.56\" has no local entrypoint (set command)\n"},
			true, cannotRun, "a container has no command"},
		{"deployment never ready, image in events", testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] error waiting for deployment \"x\" status to match expectation: deployment status: v1.DeploymentStatus{ObservedGeneration:1, Replicas:2, UpdatedReplicas:2, ReadyReplicas:0, AvailableReplicas:0}"},
			SystemErr: "event: image \"agnhost\" has no local entrypoint (set command)\n"},
			true, cannotRun, "a container has no command"},
		{"program only in the image", testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] error waiting for deployment \"x\" status to match expectation: deployment status: v1.DeploymentStatus{Replicas:2, ReadyReplicas:0, AvailableReplicas:0}"},
			SystemErr: "event: Failed: Error: runtime: invalid container spec: command \"/agnhost\" is not an executable file on this host\n"},
			true, cannotRun, "a container's program exists only inside its image"},
		{"image in events, failure elsewhere", testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] failed to wait for all pods to be deleted"},
			SystemErr: "event: image \"nginx\" has no local entrypoint (set command)\n"},
			true, failed, "failed to wait for all pods to be deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, sel := classify(tt.c, false, nil)
			if sel != tt.wantSelected {
				t.Fatalf("selected = %v, want %v", sel, tt.wantSelected)
			}
			if !sel {
				return
			}
			if res.outcome != tt.want || !strings.HasPrefix(res.detail, tt.wantDetail) {
				t.Fatalf("got (%v, %q), want (%v, %q…)", res.outcome, res.detail, tt.want, tt.wantDetail)
			}
		})
	}
}

// TestClassifyRunsImages: on a node that runs images (containerd) a pod that
// did not run is the spec's failure; needing more nodes still cannot run here.
func TestClassifyRunsImages(t *testing.T) {
	pull := testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] Timed out after 300s.\nExpected Pod to be in <v1.PodPhase>: \"Running\""},
		SystemErr: "event: Failed: Back-off pulling image \"registry.k8s.io/e2e-test-images/agnhost:2.56\": ImagePullBackOff\n"}
	if res, _ := classify(pull, false, nil); res.outcome != cannotRun {
		t.Errorf("process runtime: %v %q, want cannot run here", res.outcome, res.detail)
	}
	if res, _ := classify(pull, true, nil); res.outcome != failed || res.detail != "Timed out after 300s." {
		t.Errorf("runs images: %v %q, want failed \"Timed out after 300s.\"", res.outcome, res.detail)
	}
	nodes := testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] Requires at least 2 nodes (not 1)"}}
	if res, _ := classify(nodes, true, nil); res.outcome != cannotRun {
		t.Errorf("runs images, two nodes: %v %q, want cannot run here", res.outcome, res.detail)
	}
	// Daemon set's rollback spec asserts the node count in its It.
	rollback := testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] Conformance test suite needs a cluster with at least 2 nodes.\nExpected\n    <int>: 1\nto be >\n    <int>: 1"}}
	if res, _ := classify(rollback, true, nil); res.outcome != cannotRun {
		t.Errorf("runs images, daemon set rollback on one node: %v %q, want cannot run here", res.outcome, res.detail)
	}
}

// TestClassifyServedImages: on a node that runs images, with the images the
// run's registry serves known, a spec whose pod failed to pull another image
// cannot run here, whatever its failure says; a failed pull of a served image
// stays a failure.
func TestClassifyServedImages(t *testing.T) {
	served := []string{"registry.k8s.io/e2e-test-images/agnhost:2.56", "registry.k8s.io/pause:3.10.1"}
	wait := &failure{Type: "failed", Description: "[FAILED] Timed out after 300s.\nExpected Pod to be in <v1.PodPhase>: \"Running\""}
	for _, tt := range []struct {
		name, timeline string
		want           outcome
		wantDetail     string
	}{
		{"unserved image in an event", "event: Failed: Back-off pulling image \"registry.k8s.io/e2e-test-images/httpd:2.4.38-4\": ImagePullBackOff\n",
			cannotRun, "image registry.k8s.io/e2e-test-images/httpd:2.4.38-4 is not served"},
		{"unserved image in a dumped pod state, quotes escaped", `message: Back-off pulling image \"registry.k8s.io/e2e-test-images/nginx:1.14-4\"` + "\n",
			cannotRun, "image registry.k8s.io/e2e-test-images/nginx:1.14-4 is not served"},
		{"served image", "event: Warning Failed: Failed to pull image \"registry.k8s.io/e2e-test-images/agnhost:2.56\": not found\n",
			failed, "Timed out after 300s."},
		{"no pull failure", "event: Normal Pulling: Pulling image \"registry.k8s.io/e2e-test-images/httpd:2.4.38-4\"\n",
			failed, "Timed out after 300s."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, _ := classify(testCase{Status: "failed", Failure: wait, SystemErr: tt.timeline}, true, served)
			if res.outcome != tt.want || !strings.HasPrefix(res.detail, tt.wantDetail) {
				t.Fatalf("got (%v, %q), want (%v, %q…)", res.outcome, res.detail, tt.want, tt.wantDetail)
			}
		})
	}
	// kubectl's Update Demo (run 20261205T130228Z): its failure names no
	// pod state, the events dumped after it show the pulls.
	demo := testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] Timed out after 300 seconds waiting for name=update-demo pods to reach valid state\nIn [It] at: kubectl.go:2564"},
		SystemErr: `I1205 13:47:38.663088 dump.go:53] At 2026-12-05 13:43:45 +0000 UTC - event for update-demo-nautilus-727lb: {kubelet vm} Failed: Failed to pull image "registry.k8s.io/e2e-test-images/nautilus:1.7": pull image "registry.k8s.io/e2e-test-images/nautilus:1.7": failed to resolve reference` + "\n"}
	if res, _ := classify(demo, true, served); res.outcome != cannotRun || !strings.HasPrefix(res.detail, "image registry.k8s.io/e2e-test-images/nautilus:1.7 is not served") {
		t.Errorf("Update Demo: %v %q, want cannot run here, nautilus:1.7 named", res.outcome, res.detail)
	}
	if res, _ := classify(demo, true, append(served, "registry.k8s.io/e2e-test-images/nautilus:1.7")); res.outcome != failed {
		t.Errorf("Update Demo, nautilus served: %v %q, want failed", res.outcome, res.detail)
	}
	other := testCase{Status: "failed", Failure: &failure{Type: "failed", Description: "[FAILED] the server rejected our request"},
		SystemErr: "event: Failed: Back-off pulling image \"registry.k8s.io/e2e-test-images/httpd:2.4.38-4\"\n"}
	if res, _ := classify(other, true, served); res.outcome != cannotRun {
		t.Errorf("any failure with an unserved image's pull: %v %q, want cannot run here", res.outcome, res.detail)
	}
	other.SystemErr = "event: Failed: Back-off pulling image \"registry.k8s.io/e2e-test-images/agnhost:2.56\"\n"
	if res, _ := classify(other, true, served); res.outcome != failed {
		t.Errorf("a failure with a served image's failed pull: %v %q, want failed", res.outcome, res.detail)
	}
}

func TestSigOf(t *testing.T) {
	for in, want := range map[string]string{
		"[sig-api-machinery] Watchers should observe [Conformance]": "sig-api-machinery",
		"[It] [sig-node] Pods should run [Conformance]":             "sig-node",
		"Probing [Conformance]":                                     "other",
	} {
		if got := sigOf(in); got != want {
			t.Errorf("sigOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMerge(t *testing.T) {
	type skipped = struct {
		Message string `xml:"message,attr"`
	}
	filtered := &skipped{"skipped"}
	fail := &failure{Type: "failed", Description: "[FAILED] boom"}
	first := []testCase{{Name: "a", Status: "failed", Failure: fail}, {Name: "b", Status: "passed"}, {Name: "c", Status: "skipped", Skipped: filtered}}
	second := []testCase{{Name: "a", Status: "passed"}, {Name: "b", Status: "skipped", Skipped: filtered}, {Name: "d", Status: "passed"}}
	got := merge([][]testCase{first, second})
	var names, statuses []string
	for _, c := range got {
		names, statuses = append(names, c.Name), append(statuses, c.Status)
	}
	if strings.Join(names, ",") != "a,b,c,d" || strings.Join(statuses, ",") != "passed,passed,skipped,passed" {
		t.Fatalf("merge = %v %v, want a,b,c,d passed,passed,skipped,passed (a rerun wins; a run that filtered b out keeps b's result)", names, statuses)
	}
}
