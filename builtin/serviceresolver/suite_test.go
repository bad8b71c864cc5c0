package serviceresolver_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestServiceResolver(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "serviceresolver")
}
