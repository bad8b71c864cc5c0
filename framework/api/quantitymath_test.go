package api

import "testing"

func TestQuantityArithmetic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b, sum, diff string
		cmp             int
	}{
		{"252Mi", "100Mi", "352Mi", "152Mi", 1},
		{"500m", "600m", "1100m", "-100m", -1},
		{"1", "1", "2", "0", 0},
		{"1", "1000m", "2", "0", 0},
		{"30Gi", "0", "30Gi", "30Gi", 1},
		{"0", "1Gi", "1Gi", "-1Gi", -1},
		{"1k", "24", "1024", "976", 1},
		{"1e3", "1k", "2k", "0", 0},
		{"1.5", "0.5", "2", "1", 1},
		{"", "3", "3", "-3", -1},
		{"1Ki", "1", "1025", "1023", 1},
		{"100n", "1u", "1100n", "-900n", -1},
	} {
		a, b := Quantity{S: tc.a}, Quantity{S: tc.b}
		if got := a.Add(b).S; got != tc.sum {
			t.Errorf("%s + %s = %s, want %s", tc.a, tc.b, got, tc.sum)
		}
		if got := a.Sub(b).S; got != tc.diff {
			t.Errorf("%s - %s = %s, want %s", tc.a, tc.b, got, tc.diff)
		}
		if got := a.Cmp(b); got != tc.cmp {
			t.Errorf("cmp(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.cmp)
		}
	}
}

func TestQuantityRatRejectsGarbage(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"abc", "1Xi", "--1", "1.2.3"} {
		if _, err := (Quantity{S: s}).Rat(); err == nil {
			t.Errorf("Rat(%q) succeeded", s)
		}
	}
}
