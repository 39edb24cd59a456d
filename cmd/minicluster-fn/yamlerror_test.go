package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestErrorLines renders files whose lines are known, one per kind of problem, through the CLI:
// a message that gives a line gives the one marked "# <-" ("# first" marks the first of two
// keys), counted from the start of the file, and names the field; the kinds that have a line
// (YAML syntax, duplicate keys) must give it.
func TestErrorLines(t *testing.T) {
	const head = "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: flux-sample\n"
	other := strings.Replace(head, "flux-sample", "other", 1) + "spec:\n  containers: [{image: a}]\n---\n"
	for name, tc := range map[string]struct {
		input, field string
		lined        bool
	}{
		"syntax error": {head + "spec:\n  containers:\n    - image: ubuntu:noble\n     command: hostname # <-\n", "", true},
		"duplicate key in spec": {head + "spec:\n  size: 2 # first\n  containers: [{image: a}]\n  size: 3 # <-\n",
			"spec.size", true},
		"duplicate key in a list item": {head + "spec:\n  containers:\n    - image: a # first\n      command: hostname\n      image: b # <-\n",
			"spec.containers[0].image", true},
		"duplicate key in a map": {head + "spec:\n  containers:\n    - image: a\n      environment:\n        A: \"1\" # first\n        A: \"2\" # <-\n",
			"spec.containers[0].environment[A]", true},
		"duplicate key in a flow mapping": {head + "spec:\n  containers:\n    - {image: a, volumes: {data: {path: /d, emptyDir: true}}}\n    - {name: b, image: b, volumes: {x: {path: /x, # first\n        path: /y}}} # <-\n",
			"spec.containers[1].volumes[x].path", true},
		"duplicate key in metadata": {"apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: flux-sample # first\n" +
			"  labels: {team: a}\n  name: flux-sample # <-\nspec:\n  containers: [{image: a}]\n", "metadata.name", true},
		"duplicate key in the second document": {other + head + "spec:\n  containers: [{image: a}] # first\n  containers: [{image: b}] # <-\n",
			"spec.containers", true},
		"duplicate key after a comment document": {"# only a comment\n---\n" + head + "spec:\n  containers: [{image: a}] # first\n  containers: [{image: b}] # <-\n",
			"spec.containers", true},
		"duplicate key after empty documents": {"---\n---\n" + head + "spec:\n  containers: [{image: a}] # first\n  containers: [{image: b}] # <-\n",
			"spec.containers", true},
		"unknown field": {head + "spec:\n  sizee: 2 # <-\n  containers: [{image: a}]\n", "spec.sizee", false},
		"wrong type":    {head + "spec:\n  size: four # <-\n  containers: [{image: a}]\n", "spec.size", false},
		"invalid value": {head + "spec:\n  size: -1 # <-\n  containers: [{image: a}]\n", "spec.size", false},
	} {
		t.Run(name, func(t *testing.T) {
			lineOf := func(marker string) int {
				for i, l := range strings.Split(tc.input, "\n") {
					if strings.Contains(l, marker) {
						return i + 1
					}
				}
				return 0
			}
			file := filepath.Join(t.TempDir(), "minicluster.yaml")
			if err := os.WriteFile(file, []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, err := runCmd(t, "", "render", file)
			if err == nil || out != "" {
				t.Fatalf("render: error %v, stdout %q; want an error and no output", err, out)
			}
			for _, msg := range strings.Split(strings.TrimSpace(errOut), "\n") {
				if tc.field != "" && !strings.Contains(msg, ": MiniCluster/flux-sample: "+tc.field+": ") {
					t.Errorf("%q does not name MiniCluster/flux-sample and %s", msg, tc.field)
				}
				m := messageLine.FindStringSubmatch(msg)
				switch {
				case m == nil && tc.lined:
					t.Errorf("%q gives no line; want line %d", msg, lineOf("# <-"))
				case m != nil && m[1] != strconv.Itoa(lineOf("# <-")):
					t.Errorf("%q gives line %s; want line %d", msg, m[1], lineOf("# <-"))
				case m != nil && m[3] != "" && m[3] != strconv.Itoa(lineOf("# first")):
					t.Errorf("%q gives the first key at line %s; want line %d", msg, m[3], lineOf("# first"))
				}
				if second := strings.Contains(name, "second document"); strings.Contains(msg, file+" (document 2): ") != second {
					t.Errorf("%q: want the document number only for the second document of the file", msg)
				}
				if strings.Contains(msg, "<document>") || strings.Contains(msg, " []: ") {
					t.Errorf("%q does not name the field", msg)
				}
			}
		})
	}
}

// messageLine finds the line a message gives, and the first key's for a duplicate key.
var messageLine = regexp.MustCompile(`\bline (\d+)(: mapping key "[^"]*" already defined at line (\d+))?`)

// TestYAMLTabSaysTab: YAML does not allow a tab where it indents, and the parser says only "found
// character that cannot start any token". The message says that the character is a tab, with its
// line and column, for a file (render, validate) and for a ResourceList the KRM function reads.
func TestYAMLTabSaysTab(t *testing.T) {
	const head = "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: flux-sample\n"
	for name, tc := range map[string]struct {
		input, where string
	}{
		"indenting a key":           {head + "spec:\n\tsize: 2\n", "line 6: a tab character at column 1"},
		"after spaces":              {head + "spec:\n  \tsize: 2\n", "line 6: a tab character at column 3"},
		"after a list indicator":    {head + "spec:\n  containers:\n  - \timage: a\n", "line 7: a tab character at column 5"},
		"right after the indicator": {head + "spec:\n  containers:\n  -\timage: a\n", "line 7: a tab character at column 4"},
		"in a block scalar":         {head + "spec:\n  containers:\n  - image: a\n    command: |\n\thostname\n", "line 9: a tab character at column 1"},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "minicluster.yaml")
			if err := os.WriteFile(file, []byte(tc.input), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"render", file}, {"validate", file}} {
				out, errOut, err := runCmd(t, "", args...)
				if err == nil || out != "" {
					t.Fatalf("%s: error %v, stdout %q; want an error and no output", args[0], err, out)
				}
				want := "error: " + file + ": YAML does not parse: " + tc.where
				if !strings.HasPrefix(errOut, want) {
					t.Errorf("%s: %q, want it to start with %q", args[0], errOut, want)
				}
			}

			// The same document as an item of a ResourceList, indented by two spaces: the line is
			// counted in the ResourceList, the column moves by two.
			items := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
			for i, l := range strings.Split(strings.TrimSuffix(tc.input, "\n"), "\n") {
				prefix := "  "
				if i == 0 {
					prefix = "- "
				}
				items += prefix + l + "\n"
			}
			line, col := 0, 0
			fmt.Sscanf(tc.where, "line %d: a tab character at column %d", &line, &col)
			var out, errOut strings.Builder
			err := runKRM(strings.NewReader(items), &out, &errOut)
			want := fmt.Sprintf("line %d: a tab character at column %d", line+3, col+2)
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "MalformedYAMLError") {
				t.Errorf("KRM function: error %v, want one saying %q without kyaml's type names", err, want)
			}
		})
	}
}

// TestYAMLOtherCharacterIsNoTab: a character other than a tab that cannot start a token keeps the
// parser's message, also on a line that holds a tab elsewhere.
func TestYAMLOtherCharacterIsNoTab(t *testing.T) {
	input := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: flux-sample\nspec:\n  size:\t@2\n"
	_, results := readMiniClusterFiles([]string{"-"}, strings.NewReader(input))
	if len(results) != 1 || results[0].Message != "YAML does not parse: line 6: found character that cannot start any token" {
		t.Errorf("results %v, want the parser's message at line 6", results)
	}
}
