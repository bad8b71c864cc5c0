package v1_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

func TestPodDeletion(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Graceful pod deletion suite")
}

// suite is the suite's shared state, set in BeforeSuite: an API server with
// no controllers and no node agent, so nothing but the specs deletes pods.
var suite struct {
	env *testenv.Environment
	c   *client.Client
}

var _ = BeforeSuite(func() {
	env, err := testenv.Start(context.Background(), testenv.Options{})
	Expect(err).NotTo(HaveOccurred())
	suite.env = env
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	suite.c, err = client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if suite.env != nil {
		Expect(suite.env.Stop()).To(Succeed())
	}
})
