package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// runCmd runs the CLI as a user would, returning stdout, stderr and the error.
func runCmd(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errOut bytes.Buffer
	// Never nil: cobra would read os.Args, the test binary's flags, instead.
	cmd.SetArgs(append([]string{}, args...))
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := execute(cmd)
	return out.String(), errOut.String(), err
}

// golden compares got with the file, or rewrites it with -update.
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run go test ./cmd/minicluster-fn -update after checking the change):\n--- got\n%s\n--- want\n%s", file, got, want)
	}
}

// TestRenderGolden renders every testdata/render/<case>/input.yaml. Valid input must match
// expected.yaml with nothing on stderr but the warnings and info lines of stderr.txt (validate
// prints the same); invalid input must fail, print nothing on stdout and print the messages of
// errors.txt.
func TestRenderGolden(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/render/*/input.yaml")
	if len(inputs) == 0 {
		t.Fatal("no test cases under testdata/render")
	}
	for _, input := range inputs {
		dir := filepath.Dir(input)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out, errOut, err := runCmd(t, "", "render", input)
			expected, errorsFile, stderrFile := filepath.Join(dir, "expected.yaml"), filepath.Join(dir, "errors.txt"), filepath.Join(dir, "stderr.txt")
			if *update {
				os.Remove(expected)
				os.Remove(errorsFile)
				os.Remove(stderrFile)
				switch {
				case err != nil:
					golden(t, errorsFile, errOut)
				case errOut != "":
					golden(t, stderrFile, errOut)
					fallthrough
				default:
					golden(t, expected, out)
				}
				return
			}
			if _, statErr := os.Stat(errorsFile); statErr == nil {
				if err == nil {
					t.Fatalf("render succeeded, want failure; stdout:\n%s", out)
				}
				if out != "" {
					t.Errorf("invalid input must write nothing to stdout, got:\n%s", out)
				}
				golden(t, errorsFile, errOut)
				for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
					if !strings.HasPrefix(line, "error: "+input) && !strings.HasPrefix(line, "warning: "+input) {
						t.Errorf("every message must name the file: %q", line)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("render failed: %v\n%s", err, errOut)
			}
			for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
				if line != "" && !strings.HasPrefix(line, "warning: "+input+": ") && !strings.HasPrefix(line, "info: "+input+": ") {
					t.Errorf("unexpected stderr line for valid input: %q", line)
				}
			}
			if _, statErr := os.Stat(stderrFile); statErr == nil || errOut != "" {
				golden(t, stderrFile, errOut)
			}
			if _, validateErr, err := runCmd(t, "", "validate", input); err != nil || validateErr != errOut {
				t.Errorf("validate: err %v, stderr\n%s\nwant render's\n%s", err, validateErr, errOut)
			}
			golden(t, expected, out)
		})
	}
}

// TestRenderExamples renders each example's MiniCluster: the goldens show reviewers exactly what
// a change does to real output.
func TestRenderExamples(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*/minicluster.yaml")
	if len(files) < 5 {
		t.Fatalf("expected at least 5 examples, found %d", len(files))
	}
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file))
		t.Run(name, func(t *testing.T) {
			out, errOut, err := runCmd(t, "", "render", file)
			if err != nil {
				t.Fatalf("render %s: %v\n%s", file, err, errOut)
			}
			golden(t, filepath.Join("testdata", "examples", name+".yaml"), out)
			again, _, _ := runCmd(t, "", "render", file)
			if again != out {
				t.Error("rendering twice gave different output")
			}
		})
	}
}

// TestRenderShuffledInput renders several MiniClusters given in different orders, in one file and
// in several: the output must be byte-identical.
func TestRenderShuffledInput(t *testing.T) {
	files := []string{"../../examples/hello-world/minicluster.yaml", "../../examples/batch/minicluster.yaml", "../../examples/services/minicluster.yaml"}
	var docs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	first, errOut, err := runCmd(t, "", append([]string{"render"}, files...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	orders := [][]int{{2, 1, 0}, {1, 0, 2}, {0, 2, 1}}
	for _, order := range orders {
		var shuffled []string
		var stream []string
		for _, i := range order {
			shuffled = append(shuffled, files[i])
			stream = append(stream, docs[i])
		}
		got, _, err := runCmd(t, "", append([]string{"render"}, shuffled...)...)
		if err != nil || got != first {
			t.Errorf("files in order %v: output differs (err %v)", order, err)
		}
		got, _, err = runCmd(t, strings.Join(stream, "\n---\n"), "render", "-")
		if err != nil || got != first {
			t.Errorf("one stream in order %v: output differs (err %v)", order, err)
		}
	}
}
