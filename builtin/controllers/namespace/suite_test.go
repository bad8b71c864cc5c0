package namespace_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/framework/api"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/internal/controllertest"
	"github.com/converge-dev/converge/testenv"
)

func TestNamespace(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "namespace")
}

var (
	env *controllertest.Env
	c   *client.Client
)

var _ = BeforeSuite(func(ctx SpecContext) {
	env = controllertest.Start(ctx, "ns", testenv.Options{Controllers: []string{"namespace"}})
	c = env.Client
})

var _ = AfterSuite(func() { env.Stop() })

func newNamespace(ctx SpecContext) string { return env.Namespace(ctx) }

// gone reports whether obj no longer exists.
func gone(ctx SpecContext, obj api.Object) func() bool { return env.Gone(ctx, obj) }

// applyCRD creates the CRD in file and waits until it is Established.
func applyCRD(ctx SpecContext, file string) { env.ApplyCRD(ctx, file) }
