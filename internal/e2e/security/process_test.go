package security

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/controlplane"
)

var _ = Describe("converge token create and converge node --token, in two processes", func() {
	It("joins a node agent process to a secure control plane", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		cp := start(ctx, controlplane.Options{DataDir: filepath.Join(dir, "cp"), Secure: true, Controllers: []string{"nodelifecycle", "csr", "root-ca-cert-publisher"}})
		kubeconfig := filepath.Join(dir, "admin.kubeconfig")
		Expect(cp.WriteKubeconfig(kubeconfig)).To(Succeed())
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dir, "cp", "pki")})
		Expect(err).NotTo(HaveOccurred())
		admin := newIdentity(p, "test-admin", "system:masters")

		By("converge token create --print-join-command")
		out, err := convergeCommand(ctx, "token", "create", "--kubeconfig", kubeconfig, "--ttl", "10m", "--print-join-command").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		args := strings.Fields(strings.TrimSpace(string(out)))
		Expect(args).To(HaveLen(8), string(out))
		Expect(args[:2]).To(Equal([]string{"converge", "node"}))

		By("converge node --server --token --ca-cert-hash, in its own process")
		root := filepath.Join(dir, "node")
		run := func(extra ...string) *gexec.Session {
			GinkgoHelper()
			cmd := convergeCommand(context.WithoutCancel(ctx), append(append([]string{"node"}, extra...), "--name", "proc-node", "--root-dir", root,
				"--runtime", "process", "--pod-cidr", "127.77.0.0/16", "--node-lease-duration", "8s")...)
			cmd.Env = append(cmd.Env, "KUBECONFIG="+filepath.Join(dir, "nonexistent"))
			s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(func() { s.Kill().Wait(5 * time.Second) })
			return s
		}
		s := run(args[2:]...)
		nodeReady := func(g Gomega) {
			g.Expect(s.ExitCode()).To(Equal(-1), "converge node exited")
			r := call(ctx, admin.http, http.MethodGet, cp.URL()+"/api/v1/nodes/proc-node", nil)
			g.Expect(r.code).To(Equal(http.StatusOK), r.String())
			conds, _ := r.body["status"].(map[string]any)["conditions"].([]any)
			g.Expect(conds).To(ContainElement(And(HaveKeyWithValue("type", "Ready"), HaveKeyWithValue("status", "True"))))
		}
		Eventually(nodeReady).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		Expect(filepath.Join(root, "kubeconfig")).To(BeARegularFile())

		By("restarting without the token: the node reuses the certificate it was issued")
		s.Signal(syscall.SIGTERM)
		Eventually(s).WithTimeout(15 * time.Second).Should(gexec.Exit())
		s = run("--server", cp.URL())
		Eventually(s.Err).WithTimeout(20 * time.Second).Should(gbytes.Say("previous join"))
		Eventually(func(g Gomega) {
			r := call(ctx, admin.http, http.MethodGet, cp.URL()+"/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/proc-node", nil)
			g.Expect(r.code).To(Equal(http.StatusOK))
			g.Expect(r.raw).To(ContainSubstring("proc-node"))
		}).WithContext(ctx).Should(Succeed())
		Expect(bytes.Contains(s.Err.Contents(), []byte("Unauthorized"))).To(BeFalse())
	}, SpecTimeout(3*time.Minute))
})
