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
	return "line " + strconv.Itoa(line) + ": " + msg
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
