package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// yamlSyntaxProblem says where a file that does not parse as YAML is broken: "line 9: did not
// find expected ',' or ']'", the line counted from the start of the file.
//
// kyaml's reader, which reads the inputs, cannot say it: it splits the file at "---" and parses
// each document alone, so its line numbers count from the start of the document, and go-yaml v3
// reports a parser error at the 0-based line where the enclosing block or flow began; its message
// also carries kyaml's internal type name ("MalformedYAMLError: yaml: line 7: ..."). go-yaml v2
// reads the whole stream and reports the line of the token that is wrong: 1-based for the
// scanner's errors, 0-based for the parser's, which parserProblems tells apart. fallback, kyaml's
// error, is used when v2 parses the file (the two versions differ in a few corners of YAML).
func yamlSyntaxProblem(data []byte, fallback error) string {
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	var err error
	for {
		var doc any
		if err = dec.Decode(&doc); err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		msg := fallback.Error()
		msg = strings.TrimPrefix(msg, "MalformedYAMLError: ")
		return strings.TrimPrefix(msg, "yaml: ")
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if parserProblems[msg] || line == 0 {
		line++
	}
	if tabProblems[msg] {
		if col := indentingTab(data, line); col > 0 {
			return fmt.Sprintf("line %d: a tab character at column %d, which YAML does not allow where it indents: indent with spaces (%s)", line, col, msg)
		}
	}
	return "line " + strconv.Itoa(line) + ": " + msg
}

// tabProblems are go-yaml v2's scanner messages for a tab where YAML takes only spaces. The first
// does not say that the character is a tab: it is what a tab that indents a key or a list item
// gives, as any other character that cannot start a token would.
var tabProblems = map[string]bool{
	"found character that cannot start any token":                  true,
	"found a tab character that violates indentation":              true,
	"found a tab character where an indentation space is expected": true,
}

// indentingTab is the 1-based column of a tab in the indentation of line (1-based) of data: among
// the spaces at its start and the "-" indicators of list items there, where YAML allows only
// spaces. It is 0 when there is none, and the problem is another character.
func indentingTab(data []byte, line int) int {
	lines := bytes.Split(data, []byte("\n"))
	if line < 1 || line > len(lines) {
		return 0
	}
	text := lines[line-1]
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\t':
			return i + 1
		case text[i] == ' ':
		case text[i] == '-' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t'):
		default:
			return 0
		}
	}
	return 0
}

var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// parserProblems are the messages of go-yaml v2's parser (parserc.go), whose line is 0-based; its
// scanner's messages, all different, come with a 1-based line.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// duplicateKeyResults are the keys given twice in the file's MiniClusters, each reported at its
// line in the file, in the form of a YAML syntax error, with its object and field. (Decoding
// finds them too, but in a document kyaml has read and written again: neither its lines nor
// sigs.k8s.io/yaml's message, which names no field, would lead to the key.) File.Index is the
// document's index among the file's documents as kyaml's reader counts them.
func duplicateKeyResults(file string, data []byte) framework.Results {
	var results framework.Results
	// The whole stream is read by one decoder, so that lines count from the start of the file.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for index := 0; ; {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			// The end, or YAML that kyaml's reader (which splits the file first) takes: decoding
			// the document reports its problem then.
			break
		}
		n := yaml.NewRNode(&doc)
		if yaml.IsYNodeEmptyDoc(&doc) || n.IsNilOrEmpty() {
			continue // kyaml's reader skips it, and does not count it
		}
		if n.GetKind() == v1alpha2.Kind && n.GetApiVersion() == v1alpha2.APIVersion {
			for _, d := range v1alpha2.DuplicateKeys(&doc) {
				results = append(results, &framework.Result{
					Severity: framework.Error,
					Message:  fmt.Sprintf("YAML does not parse: line %d: mapping key %q already defined at line %d", d.Line, d.Key, d.FirstLine),
					ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: n.GetApiVersion(), Kind: n.GetKind()},
						NameMeta: yaml.NameMeta{Name: n.GetName(), Namespace: n.GetNamespace()}},
					Field: &framework.Field{Path: d.Path.String()},
					File:  &framework.File{Path: file, Index: index},
				})
			}
		}
		index++
	}
	return results
}
