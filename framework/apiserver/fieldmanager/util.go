package fieldmanager

import "slices"

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sortByTime orders managers oldest first, by name among equals.
func sortByTime(keys []string, secs func(string) int64) {
	slices.SortFunc(keys, func(a, b string) int {
		if sa, sb := secs(a), secs(b); sa != sb {
			if sa < sb {
				return -1
			}
			return 1
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
}
