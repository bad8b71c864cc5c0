package archtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/converge-dev/converge"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func under(path, dir string) bool {
	full := module + "/" + dir
	return path == full || strings.HasPrefix(path, full+"/")
}

// clientSide are the framework packages an operator binary links; they must not
// pull in the server.
var clientSide = []string{"framework/client", "framework/cache", "framework/workqueue", "framework/controller",
	"framework/reconcile", "framework/handler", "framework/builder", "framework/manager",
	"framework/leaderelection", "framework/controllerutil", "framework/scheme", "framework/api", "framework/patch", "framework/prom"}

func TestDependencyDirection(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, "k8s.io/") || strings.HasPrefix(imp, "sigs.k8s.io/controller-runtime") {
				t.Errorf("%s imports %s: the product must not import Kubernetes modules", p.ImportPath, imp)
			}
		}
		for _, dep := range p.Deps {
			switch {
			case under(p.ImportPath, "framework"):
				for _, banned := range []string{"builtin", "crd", "operators", "cmd", "testenv"} {
					if under(dep, banned) {
						t.Errorf("%s depends on %s: framework/ must not import %s/", p.ImportPath, dep, banned)
					}
				}
			case under(p.ImportPath, "crd"):
				for _, banned := range []string{"builtin", "operators", "controlplane", "cmd", "testenv"} {
					if under(dep, banned) {
						t.Errorf("%s depends on %s: crd/ builds on framework/ only", p.ImportPath, dep)
					}
				}
			case under(p.ImportPath, "builtin"):
				for _, banned := range []string{"operators", "controlplane", "cmd", "testenv", "internal"} {
					if under(dep, banned) {
						t.Errorf("%s depends on %s: builtin/ must not import %s/ (controlplane assembles both)", p.ImportPath, dep, banned)
					}
				}
			case under(p.ImportPath, "controlplane"):
				for _, banned := range []string{"cmd", "testenv"} {
					if under(dep, banned) {
						t.Errorf("%s depends on %s: the composition root sits below cmd/ and testenv/", p.ImportPath, dep)
					}
				}
			}
			// Only controlplane assembles: the commands and testenv start
			// controllers, the scheduler, runtimes and operators through it.
			if under(p.ImportPath, "cmd") || under(p.ImportPath, "testenv") {
				for _, part := range []string{"builtin/controllers", "builtin/scheduler", "builtin/node/cri/process",
					"builtin/node/cri/containerd", "builtin/node/proxy", "builtin/node/fleet", "builtin/security/csr",
					"builtin/security/rootca", "crd/lifecycle"} {
					if slices.ContainsFunc(p.Imports, func(imp string) bool {
						// The image commands find the containerd socket.
						return under(imp, part) && !under(imp, "builtin/node/cri/containerd/daemon")
					}) {
						t.Errorf("%s imports %s: assemble through controlplane/, the one composition root", p.ImportPath, part)
					}
				}
			}
			for _, cs := range clientSide {
				if under(p.ImportPath, cs) && (under(dep, "framework/apiserver") || under(dep, "framework/storage")) {
					t.Errorf("%s depends on %s: the client side must not link the server", p.ImportPath, dep)
				}
			}
			// The dashboard is a client of the API server's handler: it knows no
			// built-in kind, storage or component.
			if under(p.ImportPath, "builtin/dashboard") && (under(dep, "builtin") && !under(dep, "builtin/dashboard") ||
				under(dep, "framework/storage") || under(dep, "crd")) {
				t.Errorf("%s depends on %s: the dashboard talks to the API only (framework/ for its filters)", p.ImportPath, dep)
			}
			if p.ImportPath == module+"/operators" {
				if under(dep, "builtin") || under(dep, "crd") || under(dep, "cmd") {
					t.Errorf("%s depends on %s: the operator SDK imports only framework/", p.ImportPath, dep)
				}
			}
			if under(p.ImportPath, "operators") && (under(dep, "builtin/controllers") || under(dep, "builtin/scheduler") ||
				under(dep, "builtin/node") || under(dep, "controlplane")) {
				t.Errorf("%s depends on %s: operators may use builtin/api only", p.ImportPath, dep)
			}
		}
	}
}
