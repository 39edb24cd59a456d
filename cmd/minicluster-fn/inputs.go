package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// readMiniClusterFiles reads every document of the named files ("-" is stdin). Each document must
// be a MiniCluster; problems come back as results naming the file.
func readMiniClusterFiles(files []string, stdin io.Reader) ([]*yaml.RNode, framework.Results) {
	var nodes []*yaml.RNode
	var results framework.Results
	problem := func(file string, index int, msg string) {
		results = append(results, &framework.Result{Severity: framework.Error, Message: msg, File: &framework.File{Path: file, Index: index}})
	}
	for _, file := range files {
		data, err := readInput(file, stdin)
		if err != nil {
			problem(file, 0, err.Error())
			continue
		}
		if len(bytes.TrimSpace(data)) == 0 {
			problem(file, 0, "empty input: expected a MiniCluster document")
			continue
		}
		docs, err := (&kio.ByteReader{
			Reader:         bytes.NewReader(data),
			SetAnnotations: map[string]string{kioutil.PathAnnotation: file},
		}).Read()
		if err != nil {
			problem(file, 0, "YAML does not parse: "+yamlSyntaxProblem(data, err))
			continue
		}
		if len(docs) == 0 {
			problem(file, 0, "empty input: expected a MiniCluster document")
		}
		duplicates := duplicateKeyResults(file, data)
		results = append(results, duplicates...)
		for i, doc := range docs {
			if doc.GetKind() != v1alpha2.Kind || doc.GetApiVersion() != v1alpha2.APIVersion {
				problem(file, i, fmt.Sprintf("not a MiniCluster: apiVersion %q, kind %q (expected %s, %s)",
					doc.GetApiVersion(), doc.GetKind(), v1alpha2.APIVersion, v1alpha2.Kind))
				continue
			}
			if slices.ContainsFunc(duplicates, func(r *framework.Result) bool { return r.File.Index == i }) {
				continue // reported with its lines; decoding it would report it again without them
			}
			nodes = append(nodes, doc)
		}
	}
	return nodes, results
}

// readInput reads a file named on the command line, "-" being stdin.
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}
