package v1alpha2

import (
	"slices"
	"testing"
)

func TestNameDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"size", "size", 0}, {"", "size", 4}, {"size", "", 4},
		{"sze", "size", 1}, {"sizee", "size", 1}, {"sise", "size", 1},
		{"contianers", "containers", 1}, // two neighbours swapped: one edit
		{"ocmmand", "command", 1}, {"comand", "command", 1},
		{"mixsize", "maxsize", 1}, {"maxsize", "minsize", 2},
		{"abc", "ca", 3}, // optimal string alignment: no edit of a swapped pair
	} {
		if got := nameDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("nameDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := nameDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("nameDistance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestNearestNames(t *testing.T) {
	known := []string{"size", "maxSize", "minSize", "containers", "tasks", "pod"}
	for name, want := range map[string][]string{
		"Size":        {"size"},
		"sizes":       {"size"},
		"contianers":  {"containers"},
		"mixSize":     {"maxSize", "minSize"},
		"po":          {"pod"},
		"tsk":         nil, // two edits in a short name: too far
		"parallelism": nil,
	} {
		if got := nearestNames(name, known); !slices.Equal(got, want) {
			t.Errorf("nearestNames(%q) = %q, want %q", name, got, want)
		}
	}
}
