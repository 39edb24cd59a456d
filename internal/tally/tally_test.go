package tally

import "testing"

func TestLine(t *testing.T) {
	for _, c := range []struct {
		total  int
		counts []Count
		want   string
	}{
		{0, nil, "no checks"},
		{0, []Count{{0, "failed"}}, "no checks"},
		{1, []Count{{0, "failed"}, {1, "passed"}}, "1 check: 1 passed"},
		{4, []Count{{2, "failed"}, {1, "unknown"}, {1, "passed"}}, "4 checks: 2 failed, 1 unknown, 1 passed"},
	} {
		if got := Line(c.total, "check", "checks", c.counts); got != c.want {
			t.Errorf("Line(%d, %v) = %q, want %q", c.total, c.counts, got, c.want)
		}
	}
}
