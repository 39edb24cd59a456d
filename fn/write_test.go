package fn

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected files under testdata/")

// TestStream runs every testdata/<case>/input.yaml ResourceList through Stream, the binary's path,
// and compares the output ResourceList with expected.yaml and the error with the regexps of
// errors.txt, one a line (go test ./fn -update rewrites both).
func TestStream(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(inputs) < 8 {
		t.Fatalf("test inputs: %v, %v", inputs, err)
	}
	for _, input := range inputs {
		dir := filepath.Dir(input)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			_, err = Processor{}.Stream(bytes.NewReader(data), &out)
			var errText string
			if err != nil {
				errText = err.Error()
			}
			expected, errorsFile := filepath.Join(dir, "expected.yaml"), filepath.Join(dir, "errors.txt")
			if *update {
				writeGolden(t, expected, out.String())
				// One pattern a line, each matching its line of the error literally.
				var patterns []string
				for line := range strings.Lines(errText) {
					if line = strings.TrimSpace(line); line != "" {
						patterns = append(patterns, regexp.QuoteMeta(line))
					}
				}
				if len(patterns) > 0 {
					patterns = append(patterns, "")
				}
				writeGolden(t, errorsFile, strings.Join(patterns, "\n"))
				return
			}
			want, _ := os.ReadFile(expected)
			if got := strings.TrimSpace(out.String()); got != strings.TrimSpace(string(want)) {
				t.Errorf("Stream writes\n%s\nwant (%s)\n%s", got, expected, want)
			}
			patterns, _ := os.ReadFile(errorsFile)
			if len(patterns) == 0 && err != nil {
				t.Errorf("Stream fails: %v", err)
			}
			for line := range strings.Lines(strings.TrimSpace(string(patterns))) {
				if !regexp.MustCompile(strings.TrimSpace(line)).MatchString(errText) {
					t.Errorf("error %q does not match %q (%s)", errText, line, errorsFile)
				}
			}
		})
	}
}

// writeGolden writes an expected file, or removes it when there is nothing to expect.
func writeGolden(t *testing.T, file, text string) {
	t.Helper()
	if text == "" {
		if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
