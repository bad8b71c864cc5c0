package volumebinder_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestVolumeBinder(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "volumebinder")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "vb", testenv.Options{Controllers: []string{"volumebinder"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })
