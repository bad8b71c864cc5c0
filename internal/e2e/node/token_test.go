package node

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	rbacv1 "github.com/converge-dev/converge/builtin/api/rbac/v1"
	"github.com/converge-dev/converge/builtin/security/pki"
	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/client/rest"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

var _ = Describe("The service-account token volume", func() {
	It("gives a pod on a secure control plane a token issued through TokenRequest, the CA and its namespace", func(ctx SpecContext) {
		// A control plane of its own: tokens are issued only when it is secure.
		// The pod binds no port.
		s := startSecure(ctx, "secure-node")
		cp, cfg, c, kubeconfig, dataDir := s.cp, s.cfg, s.c, s.kubeconfig, s.dataDir

		// The ServiceAccount admission plugin adds the kube-api-access-XXXXX
		// projected volume (token, kube-root-ca.crt's ca.crt, namespace) and
		// mounts it at saDir; the root CA publisher makes kube-root-ca.crt.
		pod := &corev1.Pod{}
		pod.Name, pod.Namespace = "token-reader", "default"
		pod.Spec.RestartPolicy = corev1.RestartPolicyNever
		pod.Spec.Containers = []corev1.Container{{Name: "main", Image: "local/podserver:1",
			Command: []string{suite.server, "-cat", saDir + "/token," + saDir + "/namespace," + saDir + "/ca.crt"}}}
		// The default ServiceAccount appears shortly after the namespace.
		Eventually(func() error {
			return c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		}).
			WithContext(ctx).WithTimeout(20 * time.Second).Should(Succeed())
		Expect(c.Create(ctx, pod)).To(Succeed())
		Expect(pod.Spec.Volumes).To(ContainElement(HaveField("Name", HavePrefix("kube-api-access-"))))
		Expect(pod.Spec.Containers[0].VolumeMounts).To(ContainElement(HaveField("MountPath", saDir)))
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(pod), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), "%+v", p.Status)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())

		out, err := kubectlWith(ctx, kubeconfig, "logs", "token-reader").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))

		By("the node serves logs over TLS to the API server; others are refused (401 without credentials, 403 without nodes/proxy)")
		n := &corev1.Node{}
		Expect(c.Get(ctx, client.ObjectKey{Name: "secure-node"}, n)).To(Succeed())
		logURL := fmt.Sprintf("https://127.0.0.1:%d/containerLogs/default/token-reader/main", n.Status.DaemonEndpoints.KubeletEndpoint.Port)
		p, err := pki.Ensure(pki.Options{Dir: filepath.Join(dataDir, "pki")})
		Expect(err).NotTo(HaveOccurred())
		aliceCert, aliceKey, err := p.IssueClientCert("alice", nil, time.Hour)
		Expect(err).NotTo(HaveOccurred())
		alice, err := tls.X509KeyPair(aliceCert, aliceKey)
		Expect(err).NotTo(HaveOccurred())
		for who, tc := range map[string]struct {
			certs []tls.Certificate
			code  int
		}{"no certificate": {nil, http.StatusUnauthorized}, "alice": {[]tls.Certificate{alice}, http.StatusForbidden}} {
			hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{ //nolint:gosec // the node's certificate is self-signed
				InsecureSkipVerify: true, Certificates: tc.certs}}}
			resp, err := hc.Get(logURL)
			Expect(err).NotTo(HaveOccurred(), who)
			resp.Body.Close()
			Expect(resp.StatusCode).To(Equal(tc.code), "%s reading the node's logs", who)
			hc.CloseIdleConnections()
		}
		files := map[string]string{}
		for _, part := range strings.Split(string(out), "== ")[1:] {
			path, content, _ := strings.Cut(part, "\n")
			files[path] = strings.TrimSpace(content)
		}
		Expect(files).To(HaveKeyWithValue(saDir+"/namespace", "default"))
		Expect(files).To(HaveKeyWithValue(saDir+"/ca.crt", strings.TrimSpace(string(cfg.TLS.CAData))))
		token := files[saDir+"/token"]
		parts := strings.Split(token, ".")
		Expect(parts).To(HaveLen(3), "token %q is not a JWT", token)
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		Expect(err).NotTo(HaveOccurred())
		var claims struct {
			Sub string   `json:"sub"`
			Aud []string `json:"aud"`
			Exp int64    `json:"exp"`
			Iat int64    `json:"iat"`
		}
		Expect(json.Unmarshal(payload, &claims)).To(Succeed())
		Expect(claims.Sub).To(Equal("system:serviceaccount:default:default"))
		Expect(claims.Exp - claims.Iat).To(BeNumerically("~", 3607, 2))

		By("kubectl exec reaches the pod through the API server and the node's TLS endpoint, for who may create pods/exec")
		sleeper := &corev1.Pod{}
		sleeper.Name, sleeper.Namespace = "sleeper", "default"
		sleeper.Spec.TerminationGracePeriodSeconds = api.Ptr[int64](0)
		sleeper.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "60"}}}
		Expect(c.Create(ctx, sleeper)).To(Succeed())
		Eventually(func(g Gomega) {
			p := &corev1.Pod{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(sleeper), p)).To(Succeed())
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "%+v", p.Status)
		}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Succeed())
		execOut, err := kubectlWith(ctx, kubeconfig, "exec", "sleeper", "--", "sh", "-c", "echo over-tls; exit 5").CombinedOutput()
		var exitErr *exec.ExitError
		Expect(errors.As(err, &exitErr)).To(BeTrue(), "%v: %s", err, execOut)
		Expect(exitErr.ExitCode()).To(Equal(5), string(execOut))
		Expect(string(execOut)).To(HavePrefix("over-tls\n"))
		execOut, err = kubectlWith(ctx, kubeconfig, "--as=alice", "exec", "sleeper", "--", "true").CombinedOutput()
		Expect(err).To(HaveOccurred())
		Expect(string(execOut)).To(ContainSubstring("forbidden"))
		// With the edit rules (read on pods/exec too), kubectl 1.33's WebSocket
		// GET is allowed: no fallback to SPDY.
		for _, role := range []string{"system:aggregate-to-edit", "system:aggregate-to-view"} {
			Expect(c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: api.ObjectMeta{Name: "alice-" + strings.ReplaceAll(role, ":", "-"), Namespace: "default"},
				Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}})).To(Succeed())
		}
		real, err := filepath.EvalSymlinks(kubectlPath)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) { // the authorizer's cache sees the bindings shortly
			k133 := kubectlWith(ctx, kubeconfig, "--as=alice", "-v=4", "exec", "sleeper", "--", "echo", "as-alice")
			k133.Path = filepath.Join(filepath.Dir(real), "kubectl.1.33")
			execOut, err = k133.CombinedOutput()
			g.Expect(err).NotTo(HaveOccurred(), string(execOut))
		}).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(string(execOut)).To(ContainSubstring("The subprotocol is v5.channel.k8s.io"))
		Expect(strings.ToLower(string(execOut))).NotTo(ContainSubstring("fallback"))

		By("the API server accepts the token")
		rc, err := rest.NewClient(&rest.Config{Host: cp.URL(), TLS: rest.TLSConfig{CAData: cfg.TLS.CAData}, BearerToken: token})
		Expect(err).NotTo(HaveOccurred())
		_, err = rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/api"})
		Expect(err).NotTo(HaveOccurred())
		rc, err = rest.NewClient(&rest.Config{Host: cp.URL(), TLS: rest.TLSConfig{CAData: cfg.TLS.CAData}, BearerToken: token + "x"})
		Expect(err).NotTo(HaveOccurred())
		_, err = rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/api"})
		Expect(err).To(HaveOccurred(), "a tampered token is refused")
	}, SpecTimeout(2*time.Minute))
})
