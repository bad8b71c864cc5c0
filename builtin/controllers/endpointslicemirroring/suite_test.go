package endpointslicemirroring_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestEndpointSliceMirroring(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "endpointslicemirroring")
}

var (
	env *testenv.Environment
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	env, err = testenv.Start(ctx, testenv.Options{Controllers: []string{"endpointslicemirroring"}})
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
