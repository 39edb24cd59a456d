package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestYAMLSyntaxErrorLine: a file that does not parse is reported at the line, counted from the
// start of the file, where the YAML goes wrong, in any document of the file, without kyaml's
// internal type name. Each input marks that line with "# <-".
func TestYAMLSyntaxErrorLine(t *testing.T) {
	const head = "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: flux-sample\n"
	cases := map[string]string{
		"misindented key in a list item": head + "spec:\n  containers:\n    - image: ubuntu:noble\n     command: hostname # <-\n",
		"misindented key after a list":   head + "spec:\n  containers:\n  - image: a\n  size: 2\n    maxSize: 3 # <-\n",
		"second document": "# a comment\n---\n" + head + "spec: {containers: [{image: a}]}\n---\n" +
			head + "spec:\n  containers:\n    - image: b\n   command: x # <-\n",
		"key inside a value":      head + "spec:\n  size: 2\n  command: echo a: b # <-\n",
		"unclosed flow sequence":  head + "spec:\n  containers:\n    - image: a\n      command: [echo, hello\n      workingDir: /tmp # <-\n",
		"tab indentation":         head + "spec:\n\tsize: 2 # <-\n",
		"error on the first line": "- a\nb: c # <-\n",
		"unterminated quote":      head + "spec:\n  containers:\n    - image: \"ubuntu\n# <- the end of the file",
	}
	for name, input := range cases {
		t.Run(name, func(t *testing.T) {
			want := 0
			for i, l := range strings.Split(input, "\n") {
				if strings.Contains(l, "# <-") {
					want = i + 1
				}
			}
			nodes, results := readMiniClusterFiles([]string{"-"}, strings.NewReader(input))
			if len(nodes) != 0 || len(results) != 1 {
				t.Fatalf("got %d MiniClusters and results %v, want one error", len(nodes), results)
			}
			msg := results[0].Message
			prefix := fmt.Sprintf("YAML does not parse: line %d: ", want)
			if !strings.HasPrefix(msg, prefix) {
				t.Errorf("message %q, want it to start with %q", msg, prefix)
			}
			if strings.Contains(msg, "MalformedYAMLError") || strings.Contains(msg, "yaml: ") {
				t.Errorf("message %q shows a library's internals", msg)
			}
		})
	}
}
