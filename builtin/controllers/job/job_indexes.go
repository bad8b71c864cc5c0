package job

import (
	"slices"
	"strconv"
	"strings"
)

// indexSet is a set of completion indexes, written like Kubernetes'
// completedIndexes ("1,3-5,7").
type indexSet map[int]struct{}

// parseIndexSet reads s, keeping indexes below limit; malformed parts are
// skipped.
func parseIndexSet(s string, limit int) indexSet {
	set := indexSet{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b && i < limit; i++ {
			set[i] = struct{}{}
		}
	}
	return set
}

func (s indexSet) Add(i int)      { s[i] = struct{}{} }
func (s indexSet) Has(i int) bool { _, ok := s[i]; return ok }
func (s indexSet) Len() int       { return len(s) }

// String formats the set as sorted, compressed intervals, like Kubernetes.
func (s indexSet) String() string {
	idx := make([]int, 0, len(s))
	for i := range s {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var b strings.Builder
	for k := 0; k < len(idx); {
		j := k
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(idx[k]))
		if j > k {
			// Two consecutive indexes are written "1,2", more "1-3".
			if j == k+1 {
				b.WriteByte(',')
			} else {
				b.WriteByte('-')
			}
			b.WriteString(strconv.Itoa(idx[j]))
		}
		k = j + 1
	}
	return b.String()
}
