package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/converge-dev/converge/internal/shared"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/testenv"
)

// cli runs commands in-process against one testenv control plane.
type cli struct {
	t          *testing.T
	kubeconfig string
}

type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return "exit " + strconv.Itoa(r.code) + "\nstdout:\n" + r.stdout + "\nstderr:\n" + r.stderr
}

func newCLI(t *testing.T) *cli {
	env := testenv.StartT(t, testenv.Options{})
	return &cli{t: t, kubeconfig: env.Kubeconfig}
}

// runCtx runs converge ARGS with stdin and the environment's kubeconfig.
func (c *cli) runCtx(ctx context.Context, stdin string, args ...string) result {
	var out, errOut syncBuffer
	g := &globalOptions{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut,
		getenv: func(string) string { return "" }}
	code := execute(ctx, g, append(args, "--kubeconfig", c.kubeconfig))
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// start runs converge ARGS in the background; the exit code arrives on done.
func (c *cli) start(ctx context.Context, args ...string) (out *syncBuffer, done <-chan int) {
	out = &syncBuffer{}
	ch := make(chan int, 1)
	g := &globalOptions{stdin: strings.NewReader(""), stdout: out, stderr: io.Discard, getenv: func(string) string { return "" }}
	go func() { ch <- execute(ctx, g, append(args, "--kubeconfig", c.kubeconfig)) }()
	return out, ch
}

// waitFor waits until out contains want.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output lacks %q after 10s:\n%s", want, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *cli) run(args ...string) result { return c.runCtx(c.t.Context(), "", args...) }

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 0 {
		c.t.Fatalf("converge %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// fails runs a command that must exit 1 and returns its stderr.
func (c *cli) fails(args ...string) string {
	c.t.Helper()
	r := c.run(args...)
	if r.code != 1 {
		c.t.Fatalf("converge %s: want exit 1, got %s", strings.Join(args, " "), r)
	}
	if r.stderr == "" {
		c.t.Fatalf("converge %s: exit 1 without a message on stderr", strings.Join(args, " "))
	}
	return r.stderr
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

const appManifest = `apiVersion: v1
kind: Namespace
metadata:
  name: argocd
---
# a comment-only document is skipped
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: demo}
  creationTimestamp: null
data:
  a: b
---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels: {app: demo}
spec:
  containers:
  - name: web
    image: nginx
`

func TestApplyGetDescribeWaitDelete(t *testing.T) {
	c := newCLI(t)

	// apply from stdin: multi-document YAML, namespaces first.
	r := c.runCtx(t.Context(), appManifest, "apply", "-f", "-")
	if r.code != 0 {
		t.Fatalf("apply: %s", r)
	}
	contains(t, "apply", r.stdout, "namespace/argocd created", "configmap/settings created", "pod/web-0 created")
	if !strings.HasPrefix(r.stdout, "namespace/argocd created") {
		t.Errorf("namespace not applied first:\n%s", r.stdout)
	}
	// Re-applying changes nothing; a changed manifest is patched.
	r = c.runCtx(t.Context(), appManifest, "apply", "-f", "-")
	contains(t, "re-apply", r.stdout, "configmap/settings unchanged", "pod/web-0 unchanged")
	r = c.runCtx(t.Context(), strings.Replace(appManifest, "a: b", "a: c", 1), "apply", "-f", "-")
	contains(t, "changed apply", r.stdout, "configmap/settings configured")
	// JSON input, server-side dry run: nothing is stored.
	r = c.runCtx(t.Context(), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"},"data":{"x":"y"}}`,
		"apply", "-f", "-", "--dry-run=server")
	if r.code != 0 || !strings.Contains(r.stdout, "configmap/dry created (server dry run)") {
		t.Fatalf("dry run: %s", r)
	}
	contains(t, "get after dry run", c.fails("get", "configmap", "dry"), `Error from server (NotFound)`)
	// An invalid object: exit 1, the server's message, the source named.
	r = c.runCtx(t.Context(), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_Valid\n", "apply", "-f", "-")
	if r.code != 1 {
		t.Fatalf("invalid apply: %s", r)
	}
	contains(t, "invalid apply", r.stderr, "Invalid", "Not_Valid", "from -")
	contains(t, "no -f", c.fails("apply"), "filename")
	contains(t, "missing file", c.fails("apply", "-f", "/nonexistent.yaml"), "/nonexistent.yaml")

	// get: server-side tables.
	out := c.ok("get", "configmaps")
	contains(t, "get configmaps", out, "NAME", "DATA", "AGE", "settings")
	out = c.ok("get", "pods")
	if strings.Contains(out, "NODE") || !strings.Contains(out, "web-0") {
		t.Errorf("get pods shows priority columns or lacks the pod:\n%s", out)
	}
	contains(t, "get pods -o wide", c.ok("get", "pods", "-o", "wide"), "NODE", "IP", "web-0")
	contains(t, "get -A", c.ok("get", "configmaps", "-A"), "NAMESPACE", "default", "settings")
	contains(t, "get two types", c.ok("get", "configmaps,pods"), "configmap/settings", "pod/web-0")
	contains(t, "get -l", c.ok("get", "cm", "-l", "app=demo", "-o", "name"), "configmap/settings")
	if out := c.ok("get", "cm", "-l", "app=other", "-o", "name"); out != "" {
		t.Errorf("-l app=other printed %q", out)
	}
	r = c.run("get", "pods", "-n", "argocd")
	if r.code != 0 || !strings.Contains(r.stderr, "No resources found in argocd namespace.") {
		t.Errorf("empty get: %s", r)
	}
	var cm map[string]any
	if err := json.Unmarshal([]byte(c.ok("get", "configmap/settings", "-o", "json")), &cm); err != nil {
		t.Fatal(err)
	}
	if cm["kind"] != "ConfigMap" || cm["data"].(map[string]any)["a"] != "c" {
		t.Errorf("get -o json: %v", cm)
	}
	var list map[string]any
	if err := json.Unmarshal([]byte(c.ok("get", "configmaps", "-o", "json")), &list); err != nil || list["kind"] != "List" {
		t.Errorf("get list -o json: %v %v", list, err)
	}
	contains(t, "get -o yaml", c.ok("get", "cm", "settings", "-o", "yaml"), "kind: ConfigMap", "  a: c")
	if out := c.ok("get", "cm", "settings", "-o", "jsonpath={.data.a}"); out != "c\n" {
		t.Errorf("jsonpath: %q", out)
	}
	out = c.ok("get", "cm", "-o", `jsonpath={range .items[*]}{.metadata.name}{"\n"}{end}`)
	contains(t, "jsonpath range", out, "settings\n")
	contains(t, "get missing", c.fails("get", "configmap", "nope"), `configmaps "nope" not found`)
	contains(t, "get unknown type", c.fails("get", "gizmos"), "gizmos", "CustomResourceDefinition")
	contains(t, "bad -o", c.fails("get", "cm", "-o", "xml"), "jsonpath=TEMPLATE")

	// get -w prints the initial table, then changes, until interrupted.
	ctx, cancel := context.WithCancel(t.Context())
	wout, done := c.start(ctx, "get", "configmaps", "-w")
	waitFor(t, wout, "settings")
	c.runCtx(t.Context(), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: watched\n", "apply", "-f", "-")
	waitFor(t, wout, "watched")
	cancel()
	if code := <-done; code != 0 || strings.Count(wout.String(), "NAME") != 1 {
		t.Errorf("get -w: exit %d\n%s", code, wout)
	}
	ctx, cancel = context.WithCancel(t.Context())
	wout, done = c.start(ctx, "get", "configmaps", "watched", "-w", "-o", "name")
	waitFor(t, wout, "configmap/watched")
	cancel()
	<-done
	c.ok("delete", "configmap", "watched")

	// describe: the object and its events.
	uid := strings.TrimSpace(c.ok("get", "cm", "settings", "-o", "jsonpath={.metadata.uid}"))
	event := `{"apiVersion":"v1","kind":"Event","metadata":{"name":"settings.1"},"type":"Normal","reason":"Checked",
	"message":"all good","source":{"component":"tester"},"lastTimestamp":"` + time.Now().UTC().Format(time.RFC3339) + `",
	"involvedObject":{"apiVersion":"v1","kind":"ConfigMap","name":"settings","namespace":"default","uid":"` + uid + `"}}`
	if r := c.runCtx(t.Context(), event, "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("create event: %s", r)
	}
	out = c.ok("describe", "configmap", "settings")
	contains(t, "describe", out, "Name:", "settings", "Namespace:", "default", "Labels:", "app=demo", "Data:", "a: c",
		"Events:", "Normal", "Checked", "tester", "all good")
	contains(t, "describe pod", c.ok("describe", "pod/web-0"), "Kind:", "Pod", "Events:  <none>")
	contains(t, "describe missing", c.fails("describe", "cm", "nope"), "NotFound")

	// wait.
	contains(t, "wait jsonpath", c.ok("wait", "--for=jsonpath={.data.a}=c", "configmap/settings"), "configmap/settings condition met")
	contains(t, "wait exists", c.ok("wait", "--for=jsonpath={.data.a}", "cm", "-l", "app=demo"), "condition met")
	stderr := c.fails("wait", "--for=condition=Ready", "pod/web-0", "--timeout=600ms")
	contains(t, "wait timeout", stderr, "timed out after 600ms", "condition=Ready", "pod/web-0", "no Ready condition yet")
	contains(t, "wait bad --for", c.fails("wait", "--for=happy", "pod/web-0"), "condition=TYPE")

	// logs: the pod runs nowhere (no node in this environment); the error says so.
	stderr = c.fails("logs", "web-0")
	contains(t, "logs", stderr, "does not have a host assigned")
	contains(t, "logs missing pod", c.fails("logs", "nope"), `pod "nope" not found`, "converge get pods")
	contains(t, "logs of a deployment", c.fails("logs", "deployment/web"), "pod/POD")

	// delete, with --wait and cascade policies.
	contains(t, "delete", c.ok("delete", "configmap", "settings"), `configmap "settings" deleted`)
	contains(t, "wait delete", c.ok("wait", "--for=delete", "configmap/settings", "--timeout=5s"), "condition met")
	contains(t, "delete again", c.fails("delete", "configmap", "settings"), "NotFound")
	c.ok("delete", "configmap", "settings", "--ignore-not-found")
	// --wait reports what holds an object back (here a finalizer nobody removes).
	c.runCtx(t.Context(), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\n", "apply", "-f", "-")
	r = c.run("delete", "configmap", "held", "--cascade=foreground", "--timeout=700ms")
	if r.code != 1 || !strings.Contains(r.stdout, `configmap "held" deleted`) {
		t.Errorf("delete of a held object: %s", r)
	}
	contains(t, "delete of a held object", r.stderr, "timed out after 700ms", "example.com/hold", "--wait=false")
	contains(t, "delete -l", c.ok("delete", "pods", "-l", "app=demo", "--cascade=orphan", "--wait=false"), `pod "web-0" deleted`)
	contains(t, "bad cascade", c.fails("delete", "pod", "x", "--cascade=sometimes"), "background, foreground or orphan")
	contains(t, "delete nothing", c.fails("delete", "pods"), "--all")
	contains(t, "delete -f", c.runCtx(t.Context(), appManifest, "delete", "-f", "-", "--ignore-not-found", "--wait=false").stdout, `namespace "argocd" deleted`)
}

func TestApplyConformanceCorpus(t *testing.T) {
	c := newCLI(t)
	if r := c.runCtx(t.Context(), "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: argocd\n", "apply", "-f", "-"); r.code != 0 {
		t.Fatalf("namespace: %s", r)
	}
	out := c.ok("apply", "-f", shared.Path("conformance/crds"))
	if n := strings.Count(out, "customresourcedefinition.apiextensions.k8s.io/"); n != 12 {
		t.Errorf("applied %d CRDs, want 12:\n%s", n, out)
	}
	contains(t, "no -R", c.fails("apply", "-f", shared.Path("conformance/crs")), "-R")
	out = c.ok("apply", "-R", "-f", shared.Path("conformance/crs"))
	t.Logf("apply -R -f crs:\n%s", out)
	// The two DNSEndpoints share a name: the second updates the first.
	contains(t, "apply crs", out, "dnsendpoint.externaldns.k8s.io/examplednsrecord created",
		"dnsendpoint.externaldns.k8s.io/examplednsrecord configured", "foo.samplecontroller.k8s.io/example-foo created",
		"appproject.argoproj.io/my-project created", "workflow.argoproj.io/")
	out = c.ok("get", "foos,shirts,dnsendpoints,workflows")
	t.Logf("get:\n%s", out)
	contains(t, "get foos", out, "NAME", "foo.samplecontroller.k8s.io/example-foo")
	contains(t, "wait crd", c.ok("wait", "--for=condition=Established", "crd/foos.samplecontroller.k8s.io"), "condition met")
	contains(t, "describe foo", c.ok("describe", "foo", "example-foo"), "samplecontroller.k8s.io/v1alpha1", "Spec:")
	// Re-applying the CRDs and CRs is idempotent.
	out = c.ok("apply", "-f", shared.Path("conformance/crds"), "-f", shared.Path("conformance/crs"), "-R")
	if strings.Contains(out, " created") && !strings.Contains(out, "workflow.argoproj.io/") {
		t.Errorf("re-apply created objects:\n%s", out)
	}
}

func TestStatus(t *testing.T) {
	c := newCLI(t)
	out := c.ok("status")
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colors in non-terminal output:\n%q", out)
	}
	contains(t, "status", out, "Server:", "http://127.0.0.1:", "Live:", "ok", "Ready:", "Version:", "v1.32.0", "Data dir:", "Endpoints:")
	var rep statusReport
	if err := json.Unmarshal([]byte(c.ok("status", "-o", "json")), &rep); err != nil || !rep.Live || !rep.Ready || rep.Version == "" {
		t.Errorf("status -o json: %+v %v", rep, err)
	}
	// A server that is down: exit 1 and a hint.
	var out2, errOut bytes.Buffer
	g := &globalOptions{stdin: strings.NewReader(""), stdout: &out2, stderr: &errOut, getenv: func(string) string { return "" }}
	cfg := t.TempDir() + "/kubeconfig"
	writeKubeconfig(t, cfg, "http://127.0.0.1:1")
	if code := execute(t.Context(), g, []string{"status", "--kubeconfig", cfg}); code != 1 {
		t.Fatalf("status of a stopped server: exit %d\n%s", code, out2.String())
	}
	contains(t, "status down", errOut.String(), "converge up")
	contains(t, "no kubeconfig", c.failsWith("get", "pods", "--kubeconfig", t.TempDir()+"/missing"), "converge up")
}

func (c *cli) failsWith(args ...string) string {
	c.t.Helper()
	var out, errOut bytes.Buffer
	g := &globalOptions{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	if code := execute(c.t.Context(), g, args); code != 1 {
		c.t.Fatalf("converge %s: exit %d", strings.Join(args, " "), code)
	}
	return errOut.String()
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out, errOut bytes.Buffer
		if code := Execute(t.Context(), []string{"completion", sh}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "converge") {
			t.Errorf("completion %s: exit %d, %d bytes, %s", sh, code, out.Len(), errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := Execute(t.Context(), []string{"completion", "tcsh"}, &out, &errOut); code != 1 {
		t.Errorf("completion tcsh: exit %d", code)
	}
}

// TestEveryCommandHasHelpAndExamples keeps --help useful.
func TestEveryCommandHasHelpAndExamples(t *testing.T) {
	t.Parallel()
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		if cmd.Hidden || cmd.Name() == "help" {
			return
		}
		if cmd.Short == "" || cmd.Example == "" {
			t.Errorf("%s: Short and Example must be set", cmd.CommandPath())
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand(&bytes.Buffer{}, &bytes.Buffer{}))
	var out, errOut bytes.Buffer
	if code := Execute(t.Context(), []string{"apply", "--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Examples:") {
		t.Errorf("apply --help: exit %d\n%s", code, out.String())
	}
	if code := Execute(t.Context(), []string{"frobnicate"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "unknown command") {
		t.Errorf("unknown command: exit %d\n%s", code, errOut.String())
	}
}

func writeKubeconfig(t *testing.T, path, server string) {
	t.Helper()
	content := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: " + server +
		"\nusers:\n- name: u\n  user: {}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
