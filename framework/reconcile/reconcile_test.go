package reconcile_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/reconcile"
)

func TestTerminalError(t *testing.T) {
	t.Parallel()
	base := errors.New("bad spec")
	err := fmt.Errorf("reconcile x: %w", reconcile.TerminalError(base))
	if !reconcile.IsTerminal(err) || !errors.Is(err, base) {
		t.Fatalf("IsTerminal/Is failed for %v", err)
	}
	if reconcile.IsTerminal(base) {
		t.Fatal("plain error is terminal")
	}
	if reconcile.TerminalError(nil) != nil {
		t.Fatal("TerminalError(nil) is not nil")
	}
	nf := reconcile.TerminalError(apierrors.NewNotFound(api.GroupResource{Resource: "configmaps"}, "x"))
	if !apierrors.IsNotFound(nf) {
		t.Fatal("NotFound hidden by TerminalError")
	}
	if !(reconcile.Result{}).IsZero() {
		t.Fatal("zero Result not IsZero")
	}
}
