package leaderelection_test

import (
	"strings"
	"testing"
	"time"

	"github.com/converge-dev/converge/framework/leaderelection"
)

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	_, err := leaderelection.New(leaderelection.Config{LeaseDuration: 1500 * time.Millisecond, RenewDeadline: 20 * time.Second})
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"Client is required", "Namespace and Name", "Identity is required", "whole number of seconds", "LeaseDuration must be greater"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
