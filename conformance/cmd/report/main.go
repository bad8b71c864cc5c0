// Command report turns the JUnit XML of an upstream Kubernetes e2e run
// (e2e.test --report-dir) into docs/CONFORMANCE.md: per SIG, how many
// [Conformance] specs passed, failed or cannot run here, and for every spec that
// did not pass its name and the first line of its failure or the reason it
// cannot run here. Specs the run's --focus/--skip left out are counted, never
// silently dropped.
//
//	go run ./cmd/report -junit report/junit_01.xml -out ../docs/CONFORMANCE.md \
//	  -command 'make conformance' -duration 41m
package main

import (
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.junit, "junit", "", "JUnit XML written by e2e.test --report-dir (a file, or a directory of junit_*.xml); several runs comma-separated, a spec's result from the last run that selected it")
	flag.StringVar(&o.out, "out", "", "Markdown file to write (default: stdout)")
	flag.StringVar(&o.command, "command", "", "the command the run used, recorded in the header")
	flag.StringVar(&o.duration, "duration", "", "wall time of the run, recorded in the header")
	flag.StringVar(&o.note, "note", "", "extra paragraph for the header (e.g. why only a subset ran)")
	flag.StringVar(&o.version, "version", "v1.34.4", "the k8s.io/kubernetes version the e2e binary was built from")
	flag.BoolVar(&o.runsImages, "runs-images", false, "the node runs container images (converge up --runtime containerd): a pod that did not run is a failure, never \"cannot run here\" (but see -served-images)")
	flag.StringVar(&o.served, "served-images", "", "with -runs-images: the images the run's registry serves, comma-separated (e.g. registry.k8s.io/pause:3.10.1); a spec whose pod waited on the pull of another image cannot run here")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

type options struct {
	junit, out, command, duration, note, version string
	runsImages                                   bool
	served                                       string
}

// servedImages is the list -served-images gives.
func (o options) servedImages() []string {
	if o.served == "" {
		return nil
	}
	return strings.Split(o.served, ",")
}

func run(o options) error {
	if o.junit == "" {
		return fmt.Errorf("-junit is required")
	}
	var runs [][]testCase
	for _, p := range strings.Split(o.junit, ",") {
		files, err := junitFiles(p)
		if err != nil {
			return err
		}
		var cases []testCase
		for _, f := range files {
			cs, err := readJUnit(f)
			if err != nil {
				return err
			}
			cases = append(cases, cs...)
		}
		runs = append(runs, cases)
	}
	r := summarize(merge(runs), o.runsImages, o.servedImages())
	w := io.Writer(os.Stdout)
	if o.out != "" {
		f, err := os.Create(o.out)
		if err != nil {
			return fmt.Errorf("create %s: %w", o.out, err)
		}
		defer f.Close()
		w = f
	}
	return r.write(w, o)
}

// merge combines the specs of several runs, in the order given: a spec's
// result is the one of the last run that selected it (a run that filtered it
// out leaves an earlier result alone).
func merge(runs [][]testCase) []testCase {
	var out []testCase
	at := map[string]int{}
	for _, cases := range runs {
		for _, c := range cases {
			i, seen := at[c.Name]
			switch {
			case !seen:
				at[c.Name] = len(out)
				out = append(out, c)
			case selectedBy(c):
				out[i] = c
			}
		}
	}
	return out
}

// selectedBy reports whether the run of c selected it.
func selectedBy(c testCase) bool {
	_, selected := classify(c, false, nil)
	return selected
}

func junitFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("read junit: %w", err)
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	files, err := filepath.Glob(filepath.Join(p, "junit_*.xml"))
	if err != nil {
		return nil, fmt.Errorf("list junit files: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no junit_*.xml in %s", p)
	}
	return files, nil
}

// testCase is the part of Ginkgo's JUnit <testcase> the report reads.
type testCase struct {
	Name    string  `xml:"name,attr"`
	Status  string  `xml:"status,attr"`
	Time    float64 `xml:"time,attr"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	Failure   *failure `xml:"failure"`
	Error     *failure `xml:"error"`
	SystemErr string   `xml:"system-err"`
}

type failure struct {
	Message     string `xml:"message,attr"`
	Type        string `xml:"type,attr"`
	Description string `xml:",chardata"`
}

func readJUnit(path string) ([]testCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read junit: %w", err)
	}
	var doc struct {
		Suites []struct {
			Cases []testCase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var out []testCase
	for _, s := range doc.Suites {
		out = append(out, s.Cases...)
	}
	return out, nil
}

// outcome of one selected spec.
type outcome int

const (
	passed outcome = iota
	failed
	cannotRun
)

type result struct {
	name    string
	outcome outcome
	detail  string // first failure line, or why it cannot run here
}

type sigCount struct{ passed, failed, cannotRun int }

type report struct {
	results     map[string][]result // by SIG
	notSelected map[string]int      // [Conformance] specs the focus/skip left out, by SIG
	total       time.Duration
}

func summarize(cases []testCase, runsImages bool, served []string) report {
	r := report{results: map[string][]result{}, notSelected: map[string]int{}}
	for _, c := range cases {
		if !strings.Contains(c.Name, "[Conformance]") {
			continue
		}
		sig := sigOf(c.Name)
		res, selected := classify(c, runsImages, served)
		if !selected {
			r.notSelected[sig]++
			continue
		}
		r.total += time.Duration(c.Time * float64(time.Second))
		r.results[sig] = append(r.results[sig], res)
	}
	return r
}

// sigOf is the spec's first [sig-xxx] tag, or "other".
func sigOf(name string) string {
	if i := strings.Index(name, "[sig-"); i >= 0 {
		if j := strings.IndexByte(name[i:], ']'); j > 0 {
			return name[i+1 : i+j]
		}
	}
	return "other"
}

// classify decides a spec's outcome. selected is false for a spec the run's
// focus/skip filtered out (Ginkgo reports it skipped without a reason).
// runsImages is true when the node runs container images: then image
// markers do not make a failure "cannot run here", except a pull of an image
// not in served (when served is not empty).
func classify(c testCase, runsImages bool, served []string) (res result, selected bool) {
	res.name = strings.TrimPrefix(c.Name, "[It] ")
	switch {
	case c.Skipped != nil:
		msg := strings.TrimSpace(strings.TrimPrefix(c.Skipped.Message, "skipped"))
		msg = strings.TrimSpace(strings.TrimPrefix(msg, "-"))
		if msg == "" || c.Skipped.Message == "pending" {
			return res, false
		}
		res.outcome, res.detail = cannotRun, "skipped by the suite: "+firstLine(msg)
		return res, true
	case c.Failure == nil && c.Error == nil:
		res.outcome = passed
		return res, true
	}
	f := c.Failure
	if f == nil {
		f = c.Error
	}
	text := f.Message + "\n" + f.Description
	first := firstLine(failureText(f))
	if f.Type != "" && f.Type != "failed" {
		first = "(" + f.Type + ") " + first
	}
	if reason, ok := cannotRunReason(text, c.SystemErr, runsImages, served); ok {
		res.outcome, res.detail = cannotRun, reason+"; failure: "+first
		return res, true
	}
	res.outcome, res.detail = failed, first
	return res, true
}

func failureText(f *failure) string {
	if strings.TrimSpace(f.Message) != "" {
		return f.Message
	}
	return f.Description
}

// imageMarkers are the signs, in a failure or in the events the suite dumps
// for the failed spec's namespace, that a pod of the spec never ran because
// its container image cannot run on this node: the process runtime runs the
// pod's command on the host and never unpacks an image, so a container whose
// program exists only inside its image (agnhost, httpd, nginx, pause, ...)
// fails to start; a node that pulls images reports pull errors.
var imageMarkers = []struct{ marker, reason string }{
	{"has no local entrypoint", "a container has no command and its image cannot be unpacked by the process runtime"},
	{"executable file not found", "a container's program exists only inside its image"},
	{"is not an executable file on this host", "a container's program exists only inside its image"},
	{"ErrImagePull", "a container image cannot be pulled"},
	{"ImagePullBackOff", "a container image cannot be pulled"},
	{"InvalidImageName", "a container image cannot be pulled"},
}

// nodeMarkers are the signs that a spec needs more machines than this one.
var nodeMarkers = []struct{ marker, reason string }{
	{"Requires at least 2 nodes", "needs at least two nodes"},
	{"requires at least 2 nodes", "needs at least two nodes"},
	{"at least two nodes", "needs at least two nodes"},
	// Daemon set's rollback spec: "Conformance test suite needs a cluster
	// with at least 2 nodes."
	{"cluster with at least 2 nodes", "needs at least two nodes"},
}

// failedPull finds the node's pull failures (events and container states) and
// the image each names, quotes escaped or not.
var failedPull = regexp.MustCompile(`(?:Back-off pulling|Failed to pull) image \\*"([^"\\]+)\\*"`)

// podWait matches a failure that is about a pod (or a workload of pods) not
// reaching a running, ready or finished state, or about its image. A
// Deployment the suite waits for (a webhook, conversion webhook or sample API
// server) fails with its status dumped: ReadyReplicas:0 or
// UnavailableReplicas, whatever its conditions say.
var podWait = regexp.MustCompile(`(?i)\b(running|ready|to start|succeeded|success or failure|available|pending|containercreating)\b|ImagePull|no local entrypoint|ReadyReplicas:0\b|UnavailableReplicas:[1-9]`)

// cannotRunReason reports why a failed spec cannot run here, quoting the line
// of the first marker found. A node marker counts anywhere in the failure or
// timeline; an image marker counts only when the failure itself is about a pod
// not running (a spec failing earlier, or on something else, whose pods also
// could not run, has a failure of its own and stays failed). With runsImages
// (a node that runs images, e.g. on containerd) image markers never count: a
// pod that did not run there failed on its merits, unless the node failed to
// pull an image the run's registry does not serve (served non-empty; the
// machine has no other registry). Such a pull counts whatever the failure's
// wording (kubectl's Update Demo times out "waiting for ... pods to reach
// valid state"): the spec needed an image this machine cannot get.
func cannotRunReason(failure, timeline string, runsImages bool, served []string) (string, bool) {
	text := failure + "\n" + timeline
	for _, m := range nodeMarkers {
		if i := strings.Index(text, m.marker); i >= 0 {
			return m.reason + " (`" + lineAround(text, i) + "`)", true
		}
	}
	if runsImages {
		if len(served) == 0 {
			return "", false
		}
		for _, m := range failedPull.FindAllStringSubmatchIndex(text, -1) {
			if img := text[m[2]:m[3]]; !slices.Contains(served, img) {
				return "image " + img + " is not served to this run's node (`" + lineAround(text, m[0]) + "`)", true
			}
		}
		return "", false
	}
	if !podWait.MatchString(failure) {
		return "", false
	}
	for _, m := range imageMarkers {
		if i := strings.Index(text, m.marker); i >= 0 {
			return m.reason + " (`" + lineAround(text, i) + "`)", true
		}
	}
	return "", false
}

// lineAround is the line of text holding offset i, trimmed to 160 characters
// centred on i.
func lineAround(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		end = len(text)
	} else {
		end += i
	}
	line := text[start:end]
	at := i - start
	if len(line) > 160 {
		from := max(0, at-80)
		to := min(len(line), from+160)
		line = "…" + line[from:to] + "…"
	}
	return sanitize(strings.TrimSpace(line))
}

// firstLine is the first non-empty line of a failure, without Ginkgo's
// "[FAILED]" prefix, at most 300 characters.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		l = strings.TrimSpace(strings.TrimPrefix(l, "[FAILED]"))
		l = strings.TrimSpace(strings.TrimPrefix(l, "[TIMEDOUT]"))
		l = strings.TrimSpace(strings.TrimPrefix(l, "[PANICKED]"))
		if l == "" {
			continue
		}
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		return sanitize(l)
	}
	return "(no failure message)"
}

// sanitize keeps a text on one Markdown table/list line.
func sanitize(s string) string {
	s = strings.ReplaceAll(s, "`", "'")
	s = strings.ReplaceAll(s, "|", "\\|")
	return s
}

func (r report) sigs() []string {
	seen := map[string]bool{}
	var out []string
	for s := range r.results {
		seen[s] = true
		out = append(out, s)
	}
	for s := range r.notSelected {
		if !seen[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func (r report) count(sig string) sigCount {
	var c sigCount
	for _, res := range r.results[sig] {
		switch res.outcome {
		case passed:
			c.passed++
		case failed:
			c.failed++
		case cannotRun:
			c.cannotRun++
		}
	}
	return c
}

func (r report) write(w io.Writer, o options) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Kubernetes conformance\n\n")
	fmt.Fprintf(&b, "The `[Conformance]` specs of the upstream e2e suite (`k8s.io/kubernetes` %s, built by\n", o.version)
	runtime := "the process runtime"
	if o.runsImages {
		runtime = "containerd"
	}
	fmt.Fprintf(&b, "`conformance/build.sh`) run against a default `converge up` (HTTPS, RBAC, embedded etcd, local node\n")
	fmt.Fprintf(&b, "on %s) by `hack/conformance.sh`. Generated by `conformance/cmd/report`; do not edit.\n\n", runtime)
	if o.command != "" {
		fmt.Fprintf(&b, "- Command: `%s`\n", o.command)
	}
	fmt.Fprintf(&b, "- Generated: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	if o.duration != "" {
		fmt.Fprintf(&b, "- Wall time of the run: %s (sum of spec times: %s)\n", o.duration, r.total.Round(time.Second))
	}
	if o.note != "" {
		fmt.Fprintf(&b, "\n%s\n", o.note)
	}

	var tot sigCount
	notSel := 0
	fmt.Fprintf(&b, "\n## Summary\n\n| SIG | passed | failed | cannot run here | not selected by this run |\n|---|---:|---:|---:|---:|\n")
	for _, sig := range r.sigs() {
		c := r.count(sig)
		tot.passed += c.passed
		tot.failed += c.failed
		tot.cannotRun += c.cannotRun
		notSel += r.notSelected[sig]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", sig, c.passed, c.failed, c.cannotRun, r.notSelected[sig])
	}
	fmt.Fprintf(&b, "| **total** | **%d** | **%d** | **%d** | **%d** |\n", tot.passed, tot.failed, tot.cannotRun, notSel)

	fmt.Fprintf(&b, "\n## How a spec is classified\n\n")
	fmt.Fprintf(&b, "- **passed**: Ginkgo reports it passed.\n")
	fmt.Fprintf(&b, "- **cannot run here**: the suite skipped it at run time (e.g. it needs more nodes than this machine),\n")
	fmt.Fprintf(&b, "  or it failed and either its failure text or timeline (which holds the events of its namespace)\n")
	fmt.Fprintf(&b, "  contains a node marker:\n")
	for _, m := range nodeMarkers {
		fmt.Fprintf(&b, "  - `%s`: %s\n", m.marker, m.reason)
	}
	fmt.Fprintf(&b, "\n  or its failure is about a pod not running (it matches `%s`) and the failure or\n", podWait)
	fmt.Fprintf(&b, "  timeline contains an image marker:\n")
	for _, m := range imageMarkers {
		fmt.Fprintf(&b, "  - `%s`: %s\n", m.marker, m.reason)
	}
	fmt.Fprintf(&b, "\n  The line holding the marker is quoted as the reason, followed by the spec's own failure line.\n")
	fmt.Fprintf(&b, "  The process runtime runs a container's command on the host and never unpacks its image, so a\n")
	fmt.Fprintf(&b, "  pod whose program lives only in an upstream image (agnhost, httpd, nginx, pause, …) never runs.\n")
	fmt.Fprintf(&b, "  A spec that fails on something else first (e.g. a refused request) is **failed**, even if its pods\n")
	fmt.Fprintf(&b, "  could not have run either.\n")
	if o.runsImages {
		fmt.Fprintf(&b, "  **This run's node runs container images** (`-runs-images`): image markers are not used, so a spec\n")
		fmt.Fprintf(&b, "  whose pods did not run is **failed**")
		if served := o.servedImages(); len(served) > 0 {
			fmt.Fprintf(&b, ", unless the node's events or pod states in its failure or timeline show a\n")
			fmt.Fprintf(&b, "  failed pull of an image other than the ones the run's registry serves (`%s`),\n", strings.Join(served, "`, `"))
			fmt.Fprintf(&b, "  whatever the failure's wording: the machine reaches no other registry, so such a spec **cannot run\n")
			fmt.Fprintf(&b, "  here** (the image is named)")
		}
		fmt.Fprintf(&b, ".\n")
	}
	fmt.Fprintf(&b, "- **failed**: every other failure, timeout, panic or interruption; the first line of its failure is listed.\n")
	fmt.Fprintf(&b, "- **not selected**: `[Conformance]` specs the run's `--focus`/`--skip` left out (Ginkgo reports them\n")
	fmt.Fprintf(&b, "  skipped without a reason); counted so none is dropped silently.\n")

	for _, sec := range []struct {
		title string
		want  outcome
	}{{"Failed", failed}, {"Cannot run here", cannotRun}} {
		fmt.Fprintf(&b, "\n## %s\n", sec.title)
		any := false
		for _, sig := range r.sigs() {
			var lines []string
			for _, res := range r.results[sig] {
				if res.outcome == sec.want {
					lines = append(lines, fmt.Sprintf("- %s  \n  %s\n", sanitize(res.name), res.detail))
				}
			}
			if len(lines) == 0 {
				continue
			}
			any = true
			sort.Strings(lines)
			fmt.Fprintf(&b, "\n### %s (%d)\n\n%s", sig, len(lines), strings.Join(lines, ""))
		}
		if !any {
			fmt.Fprintf(&b, "\nNone.\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
