package flowcontrol

import (
	"slices"
	"testing"
)

func TestDeal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hash       uint64
		deck, hand int
		want       []int
	}{
		{0, 8, 3, []int{0, 1, 2}},        // every remainder 0: the lowest cards left
		{7, 8, 1, []int{7}},              // one card: hash mod deck
		{8, 8, 2, []int{0, 2}},           // 8%8=0, then 1%7=1 skips the drawn 0
		{1, 4, 4, []int{1, 0, 2, 3}},     // the whole deck, each card once
		{12345, 1, 1, []int{0}},          // a deck of one
		{^uint64(0), 128, 6, nil},        // checked for distinctness below
		{0x9e3779b97f4a7c15, 64, 8, nil}, // idem
	} {
		var hand [maxHand]int
		n := deal(tc.hash, tc.deck, tc.hand, &hand)
		got := hand[:n]
		if n != tc.hand {
			t.Errorf("deal(%d, %d, %d): %d cards", tc.hash, tc.deck, tc.hand, n)
		}
		if tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("deal(%d, %d, %d) = %v, want %v", tc.hash, tc.deck, tc.hand, got, tc.want)
		}
		seen := map[int]bool{}
		for _, c := range got {
			if c < 0 || c >= tc.deck || seen[c] {
				t.Errorf("deal(%d, %d, %d) = %v: card out of the deck or dealt twice", tc.hash, tc.deck, tc.hand, got)
			}
			seen[c] = true
		}
	}
}

// TestDealSpreads: over many flows every queue is dealt about as often, and
// two flows rarely share their whole hand.
func TestDealSpreads(t *testing.T) {
	t.Parallel()
	const deck, handSize, flows = 64, 6, 20000
	counts := make([]int, deck)
	hands := map[[handSize]int]int{}
	for i := range flows {
		var hand [maxHand]int
		deal(flowHash("fs", string(rune(i))+"user"), deck, handSize, &hand)
		var key [handSize]int
		copy(key[:], hand[:handSize])
		slices.Sort(key[:])
		hands[key]++
		for _, c := range hand[:handSize] {
			counts[c]++
		}
	}
	mean := flows * handSize / deck
	for q, n := range counts {
		if n < mean*8/10 || n > mean*12/10 {
			t.Errorf("queue %d dealt %d times, mean %d", q, n, mean)
		}
	}
	if len(hands) < flows*99/100 {
		t.Errorf("%d distinct hands for %d flows", len(hands), flows)
	}
}
