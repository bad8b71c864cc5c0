package main

import (
	_ "cel.dev/cel-go/cel"
	_ "github.com/containerd/containerd/v2/client"
	_ "github.com/go-logr/logr"
	_ "github.com/go-logr/logr/funcr"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/google/uuid"
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/santhosh-tekuri/jsonschema/v5"
	_ "github.com/spf13/cobra"
	_ "go.etcd.io/etcd/client/v3"
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "go.uber.org/goleak"
	_ "sigs.k8s.io/yaml"
)

func main() {}
