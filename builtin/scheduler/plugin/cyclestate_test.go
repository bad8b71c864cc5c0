package plugin

import (
	"errors"
	"testing"
)

type intState struct{ v int }

func (s *intState) Clone() StateData { return &intState{s.v} }

func TestCycleState(t *testing.T) {
	t.Parallel()
	c := NewCycleState()
	if _, err := c.Read("a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Read of empty state: %v, want ErrNotFound", err)
	}
	c.Write("a", &intState{1})
	c.Write("b", &intState{2})
	c.Write("a", &intState{3})
	for key, want := range map[StateKey]int{"a": 3, "b": 2} {
		got, err := ReadState[*intState](c, key)
		if err != nil || got.v != want {
			t.Errorf("ReadState(%q) = %v, %v; want %d", key, got, err, want)
		}
	}
	clone := c.Clone()
	c.Delete("a")
	if _, err := c.Read("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read after Delete: %v, want ErrNotFound", err)
	}
	got, err := ReadState[*intState](clone, "a")
	if err != nil || got.v != 3 {
		t.Errorf("clone lost a: %v, %v", got, err)
	}
	got.v = 4
	if orig, _ := ReadState[*intState](c, "b"); orig.v != 2 {
		t.Errorf("b = %d after changing the clone's a", orig.v)
	}
	if _, err := ReadState[*intState](c, "missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("ReadState of a missing key: %v", err)
	}
}
