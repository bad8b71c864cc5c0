package v1_test

import (
	"net/http"
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apierrors "github.com/converge-dev/converge/framework/api/errors"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// The bodies in testdata are Kubernetes' own protobuf encodings (written by
// bench/compat's TestProtobufFixtures from k8s.io/api's generated code): a
// policy/v1 Eviction of default/p1 whose DeleteOptions carry a UID
// precondition (of another pod) and dryRun=All, and a Binding of default/p1 to
// node-1.
var _ = Describe("Protobuf bodies of pod subresources", Ordered, func() {
	var eviction, binding []byte
	BeforeAll(func(ctx SpecContext) {
		var err error
		eviction, err = os.ReadFile("testdata/eviction.pb")
		Expect(err).NotTo(HaveOccurred())
		binding, err = os.ReadFile("testdata/binding.pb")
		Expect(err).NotTo(HaveOccurred())
		newPod(ctx, "p1", "")
	})

	It("evicts with the Eviction's DeleteOptions: its UID precondition is checked", func(ctx SpecContext) {
		code, out := sendAs(ctx, http.MethodPost, "/api/v1/namespaces/default/pods/p1/eviction", protobufType, eviction)
		Expect(code).To(Equal(http.StatusConflict), "%v", out)
		Expect(out["message"]).To(ContainSubstring("the UID in the precondition (6f1f6c2e-5a4b-4c3d-9e8f-0a1b2c3d4e5f) does not match"))
		_, err := getPod(ctx, "p1")
		Expect(err).NotTo(HaveOccurred())
	})

	It("binds to the Binding's target", func(ctx SpecContext) {
		code, out := sendAs(ctx, http.MethodPost, "/api/v1/namespaces/default/pods/p1/binding", protobufType, binding)
		Expect(code).To(Equal(http.StatusCreated), "%v", out)
		expectBound(ctx, "p1", "node-1")
	})

	DescribeTable("answers malformed bodies with a 400 Status",
		func(ctx SpecContext, sub string, body func() []byte) {
			code, out := sendAs(ctx, http.MethodPost, "/api/v1/namespaces/default/pods/p1/"+sub, protobufType, body())
			Expect(code).To(Equal(http.StatusBadRequest), "%v", out)
			Expect(out).To(HaveKeyWithValue("reason", string(apierrors.ReasonBadRequest)))
		},
		Entry("truncated eviction", "eviction", func() []byte { return eviction[:len(eviction)-5] }),
		Entry("truncated binding", "binding", func() []byte { return binding[:len(binding)-5] }),
		Entry("eviction without the prefix", "eviction", func() []byte { return eviction[4:] }),
		Entry("garbage", "binding", func() []byte { return []byte("k8s\x00\x12\x03\xff\xff\xff") }),
	)
})
