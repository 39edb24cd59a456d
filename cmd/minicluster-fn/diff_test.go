package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffGolden compares testdata/diff/old with testdata/diff/new, MiniCluster files that cover
// every impact a MiniCluster file can have (added, removed, a rename, unchanged with a move and
// with a label, resized in place, replaced, new certificate), in every format, and as rendered
// output (the same directories rendered first, one file each). Output goes to
// testdata/diff/<case>.out, stderr to <case>.stderr; -update rewrites them.
func TestDiffGolden(t *testing.T) {
	goldenDir, err := filepath.Abs(filepath.Join("testdata", "diff"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, side := range []string{"old", "new"} {
		files, err := filepath.Glob(filepath.Join(goldenDir, side, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		rendered := map[string]string{}
		for _, f := range files {
			rendered[strings.TrimSuffix(filepath.Base(f), ".yaml")] = f
		}
		renderInto(t, filepath.Join(work, "rendered-"+side), rendered)
	}
	t.Chdir(goldenDir)
	oldNew := []string{"old", "new"}
	rendered := []string{"--rendered", filepath.Join(work, "rendered-old"), filepath.Join(work, "rendered-new")}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		fails bool
	}{
		{name: "text", args: oldNew},
		{name: "text-verbose", args: append([]string{"-v"}, oldNew...)},
		{name: "markdown", args: append([]string{"--output", "markdown"}, oldNew...)},
		{name: "markdown-verbose", args: append([]string{"--output", "markdown", "-v"}, oldNew...)},
		{name: "json", args: append([]string{"--output", "json"}, oldNew...)},
		{name: "rendered", args: rendered},
		{name: "rendered-verbose", args: append([]string{"-v"}, rendered...)},
		{name: "files-stdin", args: []string{"old/hello.yaml", "-"}, stdin: readFile(t, "new/hello.yaml")},
		{name: "fail-on", args: append([]string{"--fail-on", "replaced,removed,new-certificate"}, oldNew...), fails: true},
		{name: "fail-on-not-present", args: append([]string{"--fail-on", "metadata-only"}, oldNew...)},
		{name: "error-fail-on-unknown", args: append([]string{"--fail-on", "restarted"}, oldNew...), fails: true},
		{name: "error-base-and-rendered", args: []string{"--base", "main", "--rendered", "old", "new"}, fails: true},
		{name: "error-one-argument", args: []string{"old"}, fails: true},
		{name: "error-two-stdin", args: []string{"-", "-"}, fails: true},
		{name: "error-invalid", args: []string{"old/hello.yaml", "-"}, stdin: strings.Replace(readFile(t, "new/hello.yaml"), "size: 2", "size: -1", 1), fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, tc.stdin, append([]string{"diff"}, tc.args...)...)
			if (err != nil) != tc.fails {
				t.Fatalf("error %v, want failure %v\n%s", err, tc.fails, errOut)
			}
			golden(t, filepath.Join(goldenDir, tc.name+".out"), strings.ReplaceAll(out, work, "$WORK"))
			golden(t, filepath.Join(goldenDir, tc.name+".stderr"), strings.ReplaceAll(errOut, work, "$WORK"))
		})
	}
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
