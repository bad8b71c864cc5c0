package pullspec_test

import (
	"encoding/base64"
	"regexp"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/client"
)

var _ = Describe("Image pulls on the containerd runtime", Ordered, func() {
	It("pulls an image with policy Always, says so in the kubelet's words, and runs it", func(ctx SpecContext) {
		createAndBind(ctx, pod("always", suite.testbin, corev1.PullAlways, "/bin/testbin", "serve"))
		Eventually(waiting(ctx, "always"), 30*time.Second, 100*time.Millisecond).Should(Equal("Running"))
		p := &corev1.Pod{}
		Expect(suite.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "always"}, p)).To(Succeed())
		Expect(p.Status.ContainerStatuses[0].ImageID).To(MatchRegexp(`^` + regexp.QuoteMeta(suite.open.Host) + `/demo/testbin@sha256:[0-9a-f]{64}$`))
		Eventually(events(ctx, "always"), 5*time.Second, 100*time.Millisecond).Should(ContainElements(
			`Normal Pulling: Pulling image "`+suite.testbin+`"`,
			MatchRegexp(`^Normal Pulled: Successfully pulled image "`+suite.testbin+`" in [0-9.]+m?s \([0-9.]+m?s including waiting\)\. Image size: [1-9][0-9]+ bytes\.$`),
		))
	})

	It("finds an IfNotPresent image already present, and never collects an image a pod uses", func(ctx SpecContext) {
		time.Sleep(time.Second) // a few garbage collection passes (every 300ms, thresholds 0%)
		Expect(hasImage(ctx, suite.testbin)()).To(BeTrue(), "the image of the running pod was collected")
		createAndBind(ctx, pod("present", suite.testbin, corev1.PullIfNotPresent, "/bin/testbin", "serve"))
		Eventually(waiting(ctx, "present"), 30*time.Second, 100*time.Millisecond).Should(Equal("Running"))
		Eventually(events(ctx, "present"), 5*time.Second, 100*time.Millisecond).Should(ContainElement(
			`Normal Pulled: Container image "` + suite.testbin + `" already present on machine`))
		Expect(events(ctx, "present")()).NotTo(ContainElement(HavePrefix("Normal Pulling:")))
	})

	It("collects an image once no pod uses it", func(ctx SpecContext) {
		deletePod(ctx, "always")
		Consistently(hasImage(ctx, suite.testbin), time.Second, 100*time.Millisecond).Should(BeTrue(), "pod present still uses it")
		deletePod(ctx, "present")
		Eventually(hasImage(ctx, suite.testbin), 10*time.Second, 100*time.Millisecond).Should(BeFalse())
	})

	It("reports ErrImagePull then ImagePullBackOff for a missing image", func(ctx SpecContext) {
		missing := suite.open.Host + "/demo/missing:v1"
		createAndBind(ctx, pod("missing", missing, corev1.PullIfNotPresent, "/bin/sh"))
		Eventually(waiting(ctx, "missing"), 20*time.Second, 50*time.Millisecond).Should(And(HavePrefix("ErrImagePull: "), ContainSubstring("not found")))
		Eventually(waiting(ctx, "missing"), 20*time.Second, 50*time.Millisecond).Should(Equal(`ImagePullBackOff: Back-off pulling image "` + missing + `"`))
		Eventually(events(ctx, "missing"), 5*time.Second, 100*time.Millisecond).Should(ContainElements(
			`Normal Pulling: Pulling image "`+missing+`"`,
			And(HavePrefix(`Warning Failed: Failed to pull image "`+missing+`": `), ContainSubstring("not found")),
			"Warning Failed: Error: ErrImagePull",
			`Normal BackOff: Back-off pulling image "`+missing+`"`,
			"Warning Failed: Error: ImagePullBackOff",
		))
		deletePod(ctx, "missing")
	})

	It("reports ErrImageNeverPull for an absent image with policy Never", func(ctx SpecContext) {
		createAndBind(ctx, pod("never", suite.testbin, corev1.PullNever, "/bin/testbin", "serve"))
		want := `Container image "` + suite.testbin + `" is not present with pull policy of Never`
		Eventually(waiting(ctx, "never"), 20*time.Second, 50*time.Millisecond).Should(Equal("ErrImageNeverPull: " + want))
		Eventually(events(ctx, "never"), 5*time.Second, 100*time.Millisecond).Should(ContainElements(
			"Warning ErrImageNeverPull: "+want, "Warning Failed: Error: ErrImageNeverPull"))
		Expect(events(ctx, "never")()).NotTo(ContainElement(HavePrefix("Normal Pulling:")))
		deletePod(ctx, "never")
	})

	It("pulls from a registry behind basic auth only with the right pull secret", func(ctx SpecContext) {
		// Policy Always: with IfNotPresent, a pod without the secret would run
		// the image once another pod pulled it, as on Kubernetes.
		busybox := func(name string, secrets ...string) *corev1.Pod {
			p := pod(name, suite.busybox, corev1.PullAlways, "/bin/busybox", "sleep", "3600")
			for _, s := range secrets {
				p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
			}
			return p
		}
		dockerConfig := func(name, pass string) {
			auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
			s := &corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
				corev1.DockerConfigJSONKey: []byte(`{"auths":{"http://` + suite.auth.Host + `":{"auth":"` + auth + `"}}}`)}}
			s.Namespace, s.Name = "default", name
			Expect(suite.c.Create(ctx, s)).To(Succeed())
		}
		dockerConfig("wrong", "guess")
		dockerConfig("right", password)

		By("no secret: the registry's refusal")
		createAndBind(ctx, busybox("nosecret"))
		Eventually(waiting(ctx, "nosecret"), 20*time.Second, 50*time.Millisecond).Should(And(HavePrefix("ErrImagePull: "), ContainSubstring("no basic auth credentials")))
		By("a wrong password: 401 Unauthorized")
		createAndBind(ctx, busybox("wrongsecret", "wrong"))
		Eventually(waiting(ctx, "wrongsecret"), 20*time.Second, 50*time.Millisecond).Should(And(HavePrefix("ErrImagePull: "), ContainSubstring("401 Unauthorized")))
		By("a missing secret is reported and skipped; the right one works")
		createAndBind(ctx, busybox("rightsecret", "absent", "right"))
		Eventually(waiting(ctx, "rightsecret"), 30*time.Second, 100*time.Millisecond).Should(Equal("Running"))
		Expect(events(ctx, "rightsecret")()).To(ContainElement(
			"Warning FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (absent); attempting to pull the image may not succeed."))
		Consistently(waiting(ctx, "nosecret"), time.Second, 100*time.Millisecond).ShouldNot(Equal("Running"))
		Consistently(waiting(ctx, "wrongsecret"), 100*time.Millisecond, 50*time.Millisecond).ShouldNot(Equal("Running"))

		By("the service account's imagePullSecrets count too")
		sa := &corev1.ServiceAccount{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "right"}}}
		sa.Namespace, sa.Name = "default", "puller"
		Expect(suite.c.Create(ctx, sa)).To(Succeed())
		viaSA := busybox("viasa")
		viaSA.Spec.ServiceAccountName = "puller"
		createAndBind(ctx, viaSA)
		Eventually(waiting(ctx, "viasa"), 30*time.Second, 100*time.Millisecond).Should(Equal("Running"))
		Expect(events(ctx, "viasa")()).To(ContainElement(HavePrefix(`Normal Pulled: Successfully pulled image "` + suite.busybox + `"`)))
		for _, p := range []string{"nosecret", "wrongsecret", "rightsecret", "viasa"} {
			deletePod(ctx, p)
		}
	})
})
