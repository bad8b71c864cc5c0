package v1

import (
	"strings"
	"testing"

	"github.com/converge-dev/converge/framework/api"
)

func TestValidateCSINode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		drivers []CSINodeDriver
		want    string // "" for valid
	}{
		{"none", nil, ""},
		{"one", []CSINodeDriver{{Name: "csi.example.com", NodeID: "n1", Allocatable: &VolumeNodeResources{Count: api.Ptr[int32](3)}}}, ""},
		{"unnamed", []CSINodeDriver{{NodeID: "n1"}}, "spec.drivers[0].name: Required value"},
		{"twice", []CSINodeDriver{{Name: "d", NodeID: "n1"}, {Name: "d", NodeID: "n1"}}, `spec.drivers[1].name: Duplicate value: "d"`},
		{"no node ID", []CSINodeDriver{{Name: "d"}}, "spec.drivers[0].nodeID: Required value"},
		{"negative count", []CSINodeDriver{{Name: "d", NodeID: "n1", Allocatable: &VolumeNodeResources{Count: api.Ptr[int32](-1)}}}, "must be greater than or equal to 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ValidateCSINode(&CSINode{ObjectMeta: api.ObjectMeta{Name: "n1"}, Spec: CSINodeSpec{Drivers: tc.drivers}}).ToError()
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("unexpected errors: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("errors %v, want one containing %q", got, tc.want)
			}
		})
	}
}
