package apiserver

import (
	"testing"

	"github.com/google/uuid"
)

func TestNewUIDIsRandomV4(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		s := newUID()
		u, err := uuid.Parse(s)
		if err != nil {
			t.Fatalf("newUID() = %q: %v", s, err)
		}
		if u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != s {
			t.Fatalf("newUID() = %q: version %d, variant %v", s, u.Version(), u.Variant())
		}
		if seen[s] {
			t.Fatalf("newUID() repeated %q", s)
		}
		seen[s] = true
	}
}
