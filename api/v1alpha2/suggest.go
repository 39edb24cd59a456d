package v1alpha2

import (
	"slices"
	"strings"
)

// nearestNames are the names of known closest to name, for a "did you mean" after an unknown
// field: those at the smallest edit distance (nameDistance, letter case ignored), if it is small
// enough for a typo of a name that long (one edit in names of up to five letters, two in longer
// ones), sorted. None when nothing is that near, so a field that is simply not in the schema is
// not answered with an unrelated one.
func nearestNames(name string, known []string) []string {
	limit := 1
	if len(name) > 5 {
		limit = 2
	}
	var nearest []string
	best := limit
	for _, k := range known {
		d := nameDistance(strings.ToLower(name), strings.ToLower(k))
		switch {
		case d > best:
		case d < best || nearest == nil:
			best, nearest = d, []string{k}
		default:
			nearest = append(nearest, k)
		}
	}
	slices.Sort(nearest)
	return nearest
}

// nameDistance is the number of single-letter edits (insert, delete, replace, or swap two
// neighbours: the optimal string alignment distance) that turn a into b, counted in bytes: the
// schema's names are ASCII.
func nameDistance(a, b string) int {
	// d[i][j] is the distance between a[:i] and b[:j]; three rows are enough.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
