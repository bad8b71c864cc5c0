package process

import "testing"

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		state      byte
		start      uint64
		wantErr    bool
	}{
		{"plain", "1234 (podserver) S 1 1234 1234 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 5 0 987654 1000 10 18446744073709551615", 'S', 987654, false},
		{"spaces and parens in the name", "77 (a b) (c)) Z 1 77 77 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 42 0 0", 'Z', 42, false},
		{"truncated", "77 (x) R 1 2 3", 0, 0, true},
		{"no name", "garbage", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, start, err := parseStat(tc.line)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if st != tc.state || start != tc.start {
				t.Errorf("parseStat = %c %d, want %c %d", st, start, tc.state, tc.start)
			}
		})
	}
}
