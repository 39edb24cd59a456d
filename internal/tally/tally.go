// Package tally writes the summary line that diff's and check's reports end with, so that both
// read the same way: how many findings, then how many have each verdict, in the order given (the
// worst first).
package tally

import (
	"fmt"
	"strings"
)

// Count is how many findings have a verdict.
type Count struct {
	N       int
	Verdict string
}

// Line is "9 MiniClusters: 1 replaced, 2 added" for total 9 and those counts: the noun singular
// for one finding, the verdicts counted zero left out, and "no MiniClusters" when no verdict
// counts any.
func Line(total int, singular, plural string, counts []Count) string {
	var parts []string
	for _, c := range counts {
		if c.N > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.N, c.Verdict))
		}
	}
	if len(parts) == 0 {
		return "no " + plural
	}
	noun := plural
	if total == 1 {
		noun = singular
	}
	return fmt.Sprintf("%d %s: %s", total, noun, strings.Join(parts, ", "))
}
