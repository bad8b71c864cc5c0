package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
)

// grpcCheck runs a gRPC probe as the kubelet does: grpc.health.v1.Health/Check
// for the action's service ("" = the server as a whole) on the pod IP and the
// action's port, over plain TCP (no TLS), within ctx (the probe's timeout).
// Success is a SERVING answer; a server without the health service, a timeout,
// any other answer or error fail.
func (w *podWorker) grpcCheck(ctx context.Context, g *corev1.GRPCAction) error {
	service := ""
	if g.Service != nil {
		service = *g.Service
	}
	addr := net.JoinHostPort(w.ip(), strconv.Itoa(int(g.Port)))
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent("kube-probe/1.32"))
	if err != nil {
		return fmt.Errorf("failed to connect service %q: %w", addr, err)
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		switch st, _ := status.FromError(err); {
		case st.Code() == codes.Unimplemented:
			return fmt.Errorf("this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", st.Message())
		case st.Code() == codes.DeadlineExceeded || errors.Is(ctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("timeout: health rpc to %s did not complete in time", addr)
		default:
			return fmt.Errorf("error: health rpc probe failed: %v", err)
		}
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("service unhealthy (responded with %q)", resp.GetStatus().String())
	}
	return nil
}
