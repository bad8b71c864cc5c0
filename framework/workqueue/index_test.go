package workqueue

import (
	"math/rand/v2"
	"testing"
)

// TestIndex checks the queue's index against a Go map under random puts and
// removes, with hashes chosen to collide (few distinct homes) and to spread.
func TestIndex(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		homes uint64 // distinct hash values
	}{
		{"colliding", 3},
		{"clustered", 64},
		{"spread", 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			const items = 500
			hashOf := func(item int) uint64 { return uint64(item) * 0x9e3779b97f4a7c15 % tc.homes }
			sh := &shard[int]{}
			for i := range items {
				s := sh.slot(sh.newSlot())
				s.item, s.hash = i, hashOf(i)
			}
			x := &sh.index
			want := map[int]bool{}
			for op := range 20000 {
				item := rng.IntN(items)
				h := hashOf(item)
				id, ok := indexGet(sh, h, item)
				if ok != want[item] || (ok && id != int32(item)) {
					t.Fatalf("op %d: get(%d) = %d, %v; want present=%v", op, item, id, ok, want[item])
				}
				if ok {
					x.remove(h, id)
					delete(want, item)
				} else {
					x.put(h, int32(item))
					want[item] = true
				}
				if x.n != len(want) {
					t.Fatalf("op %d: %d entries, want %d", op, x.n, len(want))
				}
			}
			for item := range items {
				if _, ok := indexGet(sh, hashOf(item), item); ok != want[item] {
					t.Fatalf("final get(%d) present=%v, want %v", item, ok, want[item])
				}
			}
		})
	}
}
