package security

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/controlplane"
)

var _ = Describe("Encryption at rest", func() {
	const (
		secretKey = "/registry/core/secrets/default/db"
		secretsAt = "/api/v1/namespaces/default/secrets"
	)
	key1 := "key1=" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	key2 := "key2=" + base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
	password := "s3cr3t-hunter2"
	secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "db"},
		"stringData": map[string]any{"password": password}}
	encoded := base64.StdEncoding.EncodeToString([]byte(password))

	raw := func(ctx context.Context, cp *controlplane.ControlPlane) string {
		GinkgoHelper()
		resp, err := cp.EtcdClient().Get(ctx, secretKey)
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.Kvs).To(HaveLen(1))
		return string(resp.Kvs[0].Value)
	}
	passwordOf := func(r reply) string {
		GinkgoHelper()
		Expect(r.code).To(Equal(http.StatusOK), r.String())
		data, _ := r.body["data"].(map[string]any)
		return data["password"].(string)
	}

	It("stores Secrets encrypted, reads them through get, list and watch, and rotates keys", func(ctx SpecContext) {
		dir := GinkgoT().TempDir()
		c := http.DefaultClient

		By("storing a Secret before encryption is turned on")
		cp := start(ctx, controlplane.Options{DataDir: dir})
		Expect(call(ctx, c, http.MethodPost, cp.URL()+secretsAt, secret).code).To(Equal(http.StatusCreated))
		Expect(raw(ctx, cp)).To(ContainSubstring(encoded))
		Expect(cp.Close()).To(Succeed())

		By("turning encryption on: the plaintext Secret still reads, a replace encrypts it")
		cp = start(ctx, controlplane.Options{DataDir: dir, EncryptionKeys: []string{key1}})
		got := call(ctx, c, http.MethodGet, cp.URL()+secretsAt+"/db", nil)
		Expect(passwordOf(got)).To(Equal(encoded))
		Expect(call(ctx, c, http.MethodPut, cp.URL()+secretsAt+"/db", got.body).code).To(Equal(http.StatusOK))
		stored := raw(ctx, cp)
		Expect(stored).To(HavePrefix("k8s:enc:aesgcm:v1:key1:"))
		Expect(stored).NotTo(ContainSubstring(encoded))
		Expect(stored).NotTo(ContainSubstring(password))

		By("a new Secret is encrypted and reads back through get, list and watch")
		w := call(ctx, c, http.MethodGet, cp.URL()+secretsAt+"?watch=1&resourceVersion=0&timeoutSeconds=1", nil)
		Expect(w.code).To(Equal(http.StatusOK))
		sc := bufio.NewScanner(strings.NewReader(w.raw))
		sc.Buffer(nil, 1<<20)
		Expect(sc.Scan()).To(BeTrue(), w.raw)
		var ev struct {
			Type   string
			Object map[string]any
		}
		Expect(json.Unmarshal(sc.Bytes(), &ev)).To(Succeed())
		Expect(ev.Type).To(Equal("ADDED"))
		Expect(ev.Object["data"]).To(HaveKeyWithValue("password", encoded))
		list := call(ctx, c, http.MethodGet, cp.URL()+secretsAt, nil)
		Expect(list.code).To(Equal(http.StatusOK))
		Expect(list.raw).To(ContainSubstring(encoded))
		list = call(ctx, c, http.MethodGet, cp.URL()+secretsAt+"?limit=1", nil)
		Expect(list.raw).To(ContainSubstring(encoded))
		Expect(cp.Close()).To(Succeed())

		By("rotating: key2 first, key1 still decrypts; a replace rewrites with key2")
		cp = start(ctx, controlplane.Options{DataDir: dir, EncryptionKeys: []string{key2, key1}})
		got = call(ctx, c, http.MethodGet, cp.URL()+secretsAt+"/db", nil)
		Expect(passwordOf(got)).To(Equal(encoded))
		Expect(raw(ctx, cp)).To(HavePrefix("k8s:enc:aesgcm:v1:key1:"))
		Expect(call(ctx, c, http.MethodPut, cp.URL()+secretsAt+"/db", got.body).code).To(Equal(http.StatusOK))
		Expect(raw(ctx, cp)).To(HavePrefix("k8s:enc:aesgcm:v1:key2:"))
		Expect(cp.Close()).To(Succeed())

		By("dropping key1: the Secret reads with key2 alone")
		cp = start(ctx, controlplane.Options{DataDir: dir, EncryptionKeys: []string{key2}})
		Expect(passwordOf(call(ctx, c, http.MethodGet, cp.URL()+secretsAt+"/db", nil))).To(Equal(encoded))
		Expect(cp.Close()).To(Succeed())

		By("without the key the Secret does not read, and the server says so")
		cp = start(ctx, controlplane.Options{DataDir: dir, EncryptionKeys: []string{key1}})
		r := call(ctx, c, http.MethodGet, cp.URL()+secretsAt+"/db", nil)
		Expect(r.code).To(Equal(http.StatusInternalServerError), r.String())
		Expect(r.raw).NotTo(ContainSubstring(encoded))
	})
})
