package security

import "testing"

// TestAggregate checks the TokenReview status.error wording: Kubernetes'
// aggregate of the token authenticators' errors.
func TestAggregate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msgs []string
		want string
	}{
		{nil, "invalid bearer token"},
		{[]string{"service account token has expired"}, "service account token has expired"},
		{[]string{"a", "b"}, "[a, b]"},
	} {
		if got := aggregate(tc.msgs); got != tc.want {
			t.Errorf("aggregate(%q) = %q, want %q", tc.msgs, got, tc.want)
		}
	}
}
