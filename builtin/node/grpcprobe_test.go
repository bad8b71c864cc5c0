package node_test

import (
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

var _ = Describe("gRPC probes", func() {
	It("make a pod Ready while grpc.health.v1 answers SERVING and unready when it does not", func(ctx SpecContext) {
		// A host-network pod's IP is the node's (127.0.0.1): the test serves
		// the health service there, standing for the container's server.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		srv := grpc.NewServer()
		hs := health.NewServer()
		healthpb.RegisterHealthServer(srv, hs)
		go func() { _ = srv.Serve(ln) }()
		DeferCleanup(srv.Stop)
		hs.SetServingStatus("app", healthpb.HealthCheckResponse_SERVING)

		pod := &corev1.Pod{}
		pod.Name = "grpcprobe"
		pod.Spec.HostNetwork = true
		c := helperContainer("main", "sleep", "forever")
		c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 1, FailureThreshold: 1, ProbeHandler: corev1.ProbeHandler{
			GRPC: &corev1.GRPCAction{Port: int32(ln.Addr().(*net.TCPAddr).Port), Service: ptr("app")}}}
		pod.Spec.Containers = []corev1.Container{c}
		createAndBind(ctx, pod)
		ready := func() (corev1.ConditionStatus, error) {
			p, err := getPod(ctx, "grpcprobe")()
			if err != nil {
				return "", err
			}
			return cond(p, corev1.PodReady), nil
		}
		Eventually(ready).WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal(corev1.ConditionTrue))

		hs.SetServingStatus("app", healthpb.HealthCheckResponse_NOT_SERVING)
		Eventually(ready).WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal(corev1.ConditionFalse))
		Eventually(func() []string { return eventReasons(ctx, "grpcprobe") }).WithContext(ctx).Should(ContainElement("Unhealthy"))

		hs.SetServingStatus("app", healthpb.HealthCheckResponse_SERVING)
		Eventually(ready).WithContext(ctx).WithTimeout(20 * time.Second).Should(Equal(corev1.ConditionTrue))
		Expect(suite.c.Delete(ctx, pod)).To(Succeed())
	}, SpecTimeout(60*time.Second))
})
