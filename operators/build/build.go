package build

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// ConvergeModule is the module path of Converge.
const ConvergeModule = "github.com/converge-dev/converge"

// Options configure Build.
type Options struct {
	// Dir is the operator's main package, or a module directory whose
	// ./plugin or ./cmd/<name> holds it (required).
	Dir string
	// Output is the plugin file (default: <dir name>.so in the current
	// directory).
	Output string
	// Host is the build info of the converge binary the plugin must load
	// into (default: this process's, debug.ReadBuildInfo).
	Host *debug.BuildInfo
	// ConvergeSource is the converge source tree the host was built from,
	// needed when the host's main module version is "(devel)" (default:
	// SourceDir()).
	ConvergeSource string
	// Go is the go command (default "go").
	Go string
	// Env is added to the go command's environment (after os.Environ).
	Env []string
	// Stdout and Stderr receive the go command's output (default: discarded,
	// but included in the error on failure).
	Stdout, Stderr io.Writer
	// KeepWorkDir leaves the generated module in place (for debugging) and
	// reports its path through WorkDir.
	KeepWorkDir bool
	// WorkDir, when set, is called with the generated module's directory.
	WorkDir func(dir string)
}

// ErrNoSource is returned when the host was built from a source tree that
// cannot be found.
var ErrNoSource = errors.New("build: the converge source tree this binary was built from is unknown: pass --converge-src")

// SourceDir guesses the converge source tree this binary was built from:
// the directory its own source files were compiled at (absent with
// -trimpath), else the enclosing converge module of the working directory.
// It returns "" when neither exists.
func SourceDir() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
		if isConvergeRoot(root) {
			return root
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if isConvergeRoot(dir) {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

func isConvergeRoot(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == ConvergeModule {
			return true
		}
	}
	return false
}

// Result describes a finished build.
type Result struct {
	// Output is the plugin file's absolute path.
	Output string
	// Package is the operator's main package.
	Package string
	// Args is the go command line that built it.
	Args []string
}

type goRunner struct {
	gocmd string
	env   []string
	out   io.Writer
	err   io.Writer
}

func (g *goRunner) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, g.gocmd, args...)
	cmd.Dir = dir
	cmd.Env = g.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout = io.MultiWriter(&stdout, g.out)
	cmd.Stderr = io.MultiWriter(&stderr, g.err)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s (in %s): %w\n%s", g.gocmd, strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// Build builds opts.Dir as a plugin for opts.Host.
func Build(ctx context.Context, opts Options) (*Result, error) {
	host := opts.Host
	if host == nil {
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			return nil, errors.New("build: this binary has no Go build info")
		}
		host = bi
	}
	if opts.Dir == "" {
		return nil, errors.New("build: no operator directory given")
	}
	if setting(host, "CGO_ENABLED") != "1" {
		return nil, errors.New("build: this converge binary was built with CGO_ENABLED=0 and cannot load plugins; rebuild converge with CGO_ENABLED=1")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	env := buildEnv(host, opts.Env)
	g := &goRunner{gocmd: cmpOr(opts.Go, "go"), env: env, out: orDiscard(opts.Stdout), err: orDiscard(opts.Stderr)}

	op, err := inspectOperator(ctx, g, dir)
	if err != nil {
		return nil, err
	}
	output := opts.Output
	if output == "" {
		output = filepath.Base(dir) + ".so"
		if filepath.Base(op.pkgDir) != "plugin" {
			output = filepath.Base(op.pkgDir) + ".so"
		}
	}
	if output, err = filepath.Abs(output); err != nil {
		return nil, err
	}

	work, err := os.MkdirTemp("", "converge-operator-build-")
	if err != nil {
		return nil, err
	}
	if opts.WorkDir != nil {
		opts.WorkDir(work)
	}
	if !opts.KeepWorkDir {
		defer os.RemoveAll(work)
	}
	src := ""
	if isDevel(host.Main.Version) {
		src = cmpOr(opts.ConvergeSource, SourceDir())
		if src == "" {
			return nil, ErrNoSource
		}
		if src, err = filepath.Abs(src); err != nil {
			return nil, err
		}
		if !isConvergeRoot(src) {
			return nil, fmt.Errorf("build: %s is not a converge source tree (no go.mod of %s)", src, ConvergeModule)
		}
	}
	workspace := src != "" && setting(host, "-trimpath") == "true"
	if err := writeModule(work, host, op, src, workspace); err != nil {
		return nil, err
	}
	if workspace {
		g.env = append(g.env, "GOWORK="+filepath.Join(work, "go.work"))
	} else {
		g.env = append(g.env, "GOWORK=off", "GOFLAGS="+goflags("-mod=mod"))
	}
	args := append([]string{"build", "-buildmode=plugin", "-o", output}, buildFlags(host)...)
	args = append(args, op.pkg)
	if _, err := g.run(ctx, work, args...); err != nil {
		return nil, fmt.Errorf("build operator plugin %s: %w", op.pkg, err)
	}
	if err := checkVersions(ctx, g, work, host); err != nil {
		os.Remove(output)
		return nil, err
	}
	return &Result{Output: output, Package: op.pkg, Args: append([]string{g.gocmd}, args...)}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func isDevel(v string) bool { return v == "" || v == "(devel)" }

// goflags appends extra to the GOFLAGS of the environment, keeping the user's.
func goflags(extra string) string {
	return strings.TrimSpace(os.Getenv("GOFLAGS") + " -buildvcs=false " + extra)
}

// buildEnv is the environment reproducing the host's toolchain and target.
func buildEnv(host *debug.BuildInfo, extra []string) []string {
	env := slices.Clone(os.Environ())
	goVersion, _, _ := strings.Cut(host.GoVersion, " ")
	env = append(env, "GOTOOLCHAIN="+goVersion, "CGO_ENABLED=1")
	for _, k := range []string{"GOOS", "GOARCH", "GO386", "GOAMD64", "GOARM", "GOARM64", "GOMIPS", "GOMIPS64",
		"GOPPC64", "GORISCV64", "GOWASM", "GOEXPERIMENT"} {
		if v := setting(host, k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "GOFLAGS="+goflags(""))
	return append(env, extra...)
}

// buildFlags are the go build flags of the host that shared packages depend on.
func buildFlags(host *debug.BuildInfo) []string {
	var args []string
	for _, k := range []string{"-race", "-msan", "-asan", "-trimpath"} {
		if setting(host, k) == "true" {
			args = append(args, k)
		}
	}
	for _, k := range []string{"-tags", "-gcflags", "-asmflags", "-compiler"} {
		if v := setting(host, k); v != "" {
			args = append(args, k+"="+v)
		}
	}
	return args
}

type operatorInfo struct {
	pkg      string // import path of the main package
	pkgDir   string
	module   string // module path
	modDir   string
	replaces []replace
	sums     []byte
}

type replace struct {
	Old struct{ Path, Version string }
	New struct{ Path, Version string }
}

// inspectOperator finds the operator's main package and module.
func inspectOperator(ctx context.Context, g *goRunner, dir string) (*operatorInfo, error) {
	candidates := []string{dir, filepath.Join(dir, "plugin")}
	if ents, err := os.ReadDir(filepath.Join(dir, "cmd")); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				candidates = append(candidates, filepath.Join(dir, "cmd", e.Name()))
			}
		}
	}
	var info *operatorInfo
	for _, c := range candidates {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		out, err := g.run(ctx, c, "list", "-f", "{{.Name}}\t{{.ImportPath}}\t{{.Dir}}\t{{.Module.Path}}\t{{.Module.Dir}}", ".")
		if err != nil {
			if c == dir {
				return nil, fmt.Errorf("build: %s: %w", dir, err)
			}
			continue
		}
		f := strings.Split(strings.TrimSpace(string(out)), "\t")
		if len(f) == 5 && f[0] == "main" {
			info = &operatorInfo{pkg: f[1], pkgDir: f[2], module: f[3], modDir: f[4]}
			break
		}
	}
	if info == nil {
		return nil, fmt.Errorf("build: no main package in %s or its ./plugin or ./cmd/*: the plugin's main package exports "+
			"`var Operator operators.Operator`", dir)
	}
	if info.module == ConvergeModule {
		return info, nil
	}
	out, err := g.run(ctx, info.modDir, "mod", "edit", "-json")
	if err != nil {
		return nil, err
	}
	var mf struct{ Replace []replace }
	if err := json.Unmarshal(out, &mf); err != nil {
		return nil, fmt.Errorf("build: parse %s/go.mod: %w", info.modDir, err)
	}
	for _, r := range mf.Replace {
		if r.Old.Path == ConvergeModule {
			continue
		}
		if r.New.Version == "" && !filepath.IsAbs(r.New.Path) {
			r.New.Path = filepath.Join(info.modDir, r.New.Path)
		}
		info.replaces = append(info.replaces, r)
	}
	info.sums, _ = os.ReadFile(filepath.Join(info.modDir, "go.sum"))
	return info, nil
}

// writeModule writes the generated go.mod (and go.work), go.sum.
func writeModule(work string, host *debug.BuildInfo, op *operatorInfo, src string, workspace bool) error {
	goVersion, _, _ := strings.Cut(strings.TrimPrefix(host.GoVersion, "go"), " ")
	var mod, repl bytes.Buffer
	fmt.Fprintf(&mod, "// Generated by converge operator build: pins the modules of the converge binary.\nmodule converge.local/operatorbuild\n\ngo %s\n\nrequire (\n", goVersion)
	pseudo := "v0.0.0-00010101000000-000000000000"
	if op.module != ConvergeModule {
		fmt.Fprintf(&mod, "\t%s %s\n", op.module, pseudo)
		fmt.Fprintf(&repl, "replace %s => %s\n", op.module, op.modDir)
	}
	switch {
	case src != "" && workspace:
		// converge is a workspace module: no require or replace needed.
	case src != "":
		fmt.Fprintf(&mod, "\t%s %s\n", ConvergeModule, pseudo)
		fmt.Fprintf(&repl, "replace %s => %s\n", ConvergeModule, src)
	default:
		fmt.Fprintf(&mod, "\t%s %s\n", ConvergeModule, host.Main.Version)
		fmt.Fprintf(&repl, "replace %s => %s %s\n", ConvergeModule, ConvergeModule, host.Main.Version)
	}
	var sums bytes.Buffer
	for _, d := range host.Deps {
		if d.Path == op.module {
			continue
		}
		fmt.Fprintf(&mod, "\t%s %s\n", d.Path, d.Version)
		to := d
		if d.Replace != nil {
			to = d.Replace
		}
		if to.Version == "" { // directory replacement in the host's build
			fmt.Fprintf(&repl, "replace %s => %s\n", d.Path, to.Path)
			continue
		}
		fmt.Fprintf(&repl, "replace %s => %s %s\n", d.Path, to.Path, to.Version)
		if to.Sum != "" {
			fmt.Fprintf(&sums, "%s %s %s\n", to.Path, to.Version, to.Sum)
		}
	}
	pinned := map[string]bool{ConvergeModule: true, op.module: true}
	for _, d := range host.Deps {
		pinned[d.Path] = true
	}
	for _, r := range op.replaces {
		if pinned[r.Old.Path] {
			continue // the host's version wins
		}
		old := r.Old.Path
		if r.Old.Version != "" {
			old += " " + r.Old.Version
		}
		fmt.Fprintf(&repl, "replace %s => %s %s\n", old, r.New.Path, r.New.Version)
	}
	mod.WriteString(")\n\n")
	if workspace {
		var w bytes.Buffer
		fmt.Fprintf(&w, "go %s\n\nuse (\n\t.\n\t%s\n)\n\n", goVersion, src)
		w.Write(repl.Bytes())
		if err := os.WriteFile(filepath.Join(work, "go.work"), w.Bytes(), 0o644); err != nil {
			return err
		}
	} else {
		mod.Write(repl.Bytes())
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), mod.Bytes(), 0o644); err != nil {
		return err
	}
	sums.Write(op.sums)
	if src != "" {
		if b, err := os.ReadFile(filepath.Join(src, "go.sum")); err == nil {
			sums.Write(b)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "go.sum"), sums.Bytes(), 0o644); err != nil {
		return err
	}
	if workspace {
		return os.WriteFile(filepath.Join(work, "go.work.sum"), sums.Bytes(), 0o644)
	}
	return nil
}

// checkVersions verifies that the build used the host's version of every
// module the host links (replace pins make this hold unless the operator's
// own replace directives interfere).
func checkVersions(ctx context.Context, g *goRunner, work string, host *debug.BuildInfo) error {
	out, err := g.run(ctx, work, "list", "-m", "-f", "{{.Path}} {{.Version}} {{with .Replace}}{{.Path}} {{.Version}}{{end}}", "all")
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		switch len(f) {
		case 2:
			got[f[0]] = f[0] + "@" + f[1]
		case 4:
			got[f[0]] = f[2] + "@" + f[3]
		case 3:
			got[f[0]] = f[2]
		}
	}
	for _, d := range host.Deps {
		to := d
		if d.Replace != nil {
			to = d.Replace
		}
		want := to.Path + "@" + to.Version
		if to.Version == "" {
			want = to.Path
		}
		if g, ok := got[d.Path]; ok && g != want {
			return fmt.Errorf("build: the plugin would use %s but this converge binary links %s: "+
				"make the operator's go.mod use the host's version", g, want)
		}
	}
	return nil
}
