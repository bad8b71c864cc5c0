// Command incluster is an API client run as a pod, configured the way
// client-go's rest.InClusterConfig configures one: the API server from
// KUBERNETES_SERVICE_HOST/PORT, the pod's ServiceAccount token and CA. It
// prints the server it used, the server's version and whether it may create
// SelfSubjectAccessReviews (every authenticated user may; anonymous may not),
// then exits 0, or prints the error and exits 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/converge-dev/converge/framework/client/kubeconfig"
	"github.com/converge-dev/converge/framework/client/rest"
)

func main() {
	if err := run(); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, ns, err := kubeconfig.Environment{Getenv: os.Getenv}.InCluster()
	if err != nil {
		return err
	}
	fmt.Printf("host=%s namespace=%s\n", cfg.Host, ns)
	rc, err := rest.NewClient(cfg)
	if err != nil {
		return err
	}
	resp, err := rc.Do(ctx, rest.Request{Method: http.MethodGet, Path: "/version"})
	if err != nil {
		return fmt.Errorf("get /version: %w", err)
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		return fmt.Errorf("decode version: %w", err)
	}
	fmt.Printf("version=%s\n", v.GitVersion)
	review := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":` +
		`{"group":"authorization.k8s.io","resource":"selfsubjectaccessreviews","verb":"create"}}}`
	resp, err = rc.Do(ctx, rest.Request{Method: http.MethodPost, Path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		Body: []byte(review)})
	if err != nil {
		return fmt.Errorf("create selfsubjectaccessreview: %w", err)
	}
	var r struct {
		Status struct {
			Allowed bool `json:"allowed"`
		} `json:"status"`
	}
	if err := json.Unmarshal(resp.Body, &r); err != nil {
		return fmt.Errorf("decode review: %w", err)
	}
	fmt.Printf("allowed=%v\n", r.Status.Allowed)
	return nil
}
