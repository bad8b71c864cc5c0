package node

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/converge-dev/converge/builtin/api/all"
	"github.com/converge-dev/converge/controlplane"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/testenv"
)

// secureCP is a control plane of a spec's own, next to the suite's.
type secureCP struct {
	cp          *controlplane.ControlPlane
	dataDir     string
	serviceCIDR string
	cfg         *client.Config // an admin's
	c           *client.Client // with cfg
	kubeconfig  string         // an admin's
}

// startSecure starts a secure control plane (tokens are issued only then) with
// a local node named nodeName, the serviceaccount controller and the
// scheduler, closed when the spec ends. Its Services take a range of their
// own, so its service proxy (the kubernetes Service's IP:443 included) meets
// none of the suite's environment.
func startSecure(ctx context.Context, nodeName string) secureCP {
	GinkgoHelper()
	s := secureCP{dataDir: GinkgoT().TempDir(), serviceCIDR: testenv.ServiceCIDR()}
	cp, err := controlplane.Start(ctx, controlplane.Options{DataDir: s.dataDir, NoFsync: true, CompactionInterval: -1,
		Secure: true, LocalNode: true, NodeName: nodeName, ServiceCIDR: s.serviceCIDR,
		Controllers: []string{"serviceaccount", "csr", "root-ca-cert-publisher"}, Scheduler: true})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { Expect(cp.Close()).To(Succeed()) })
	s.cp = cp
	s.cfg, err = cp.ClientConfig("test-admin")
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	s.c, err = client.New(s.cfg, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	s.kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(cp.WriteKubeconfig(s.kubeconfig)).To(Succeed())
	return s
}
