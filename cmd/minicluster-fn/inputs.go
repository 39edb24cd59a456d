package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/fn"
)

// readMiniClusterFiles reads every document of the named files ("-" is stdin) and of the
// MiniCluster files under the named directories (see miniClusterFilesUnder). Each document must be
// a MiniCluster; problems come back as results naming the file.
func readMiniClusterFiles(sources []string, stdin io.Reader) ([]*yaml.RNode, framework.Results) {
	return readMiniClusters(sources, stdin, true)
}

// readMiniClusters is readMiniClusterFiles; with requireOne false, a directory without any
// MiniCluster is no problem (diff: a revision may have none).
func readMiniClusters(sources []string, stdin io.Reader, requireOne bool) ([]*yaml.RNode, framework.Results) {
	var nodes []*yaml.RNode
	var results framework.Results
	problem := func(file string, index int, msg string) {
		results = append(results, &framework.Result{Severity: framework.Error, Message: msg, File: &framework.File{Path: file, Index: index}})
	}
	var files []string
	for _, src := range sources {
		if fi, err := os.Stat(src); src == "-" || err != nil || !fi.IsDir() {
			files = append(files, src)
			continue
		}
		found, problems := miniClusterFilesUnder(src, requireOne)
		files = append(files, found...)
		results = append(results, problems...)
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
		hasMiniCluster := slices.ContainsFunc(docs, fn.IsMiniCluster)
		duplicates := duplicateKeyResults(file, data)
		results = append(results, duplicates...)
		for i, doc := range docs {
			switch {
			case doc.GetKind() == v1alpha2.Kind && doc.GetApiVersion() == v1alpha2.APIVersion:
				// A duplicate key is reported above with its lines; decoding the document would
				// report it again without them.
				if !slices.ContainsFunc(duplicates, func(r *framework.Result) bool { return r.File.Index == i }) {
					nodes = append(nodes, doc)
				}
			case hasMiniCluster && !fn.IsMiniCluster(doc):
				// Rendering the file would drop this object from what is applied: the rendered
				// output holds the MiniClusters' objects only.
				problem(file, i, fmt.Sprintf("%s/%s is in a file that holds a MiniCluster: a MiniCluster file must hold only MiniClusters, "+
					"because its rendered output holds nothing else; move %s/%s to a file of its own", doc.GetKind(), doc.GetName(), doc.GetKind(), doc.GetName()))
			case v1alpha2.OtherVersionDetail(doc.GetApiVersion(), doc.GetKind()) != "":
				// A MiniCluster of another version: reported at its apiVersion, as the KRM
				// function reports it.
				results = append(results, &framework.Result{
					Severity: framework.Error,
					Message:  v1alpha2.OtherVersionDetail(doc.GetApiVersion(), doc.GetKind()),
					ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: doc.GetApiVersion(), Kind: doc.GetKind()},
						NameMeta: yaml.NameMeta{Name: doc.GetName(), Namespace: doc.GetNamespace()}},
					Field: &framework.Field{Path: "apiVersion"},
					File:  &framework.File{Path: file, Index: i},
				})
			default:
				problem(file, i, fmt.Sprintf("not a MiniCluster: apiVersion %q, kind %q (expected %s, %s)",
					doc.GetApiVersion(), doc.GetKind(), v1alpha2.APIVersion, v1alpha2.Kind))
			}
		}
	}
	return nodes, results
}

// miniClusterFilesUnder finds the *.yaml and *.yml files under dir that hold a MiniCluster, in
// lexical order. Whether a file holds one is decided by parsing it, as for any input: a document
// whose kind is MiniCluster in the flux-framework.org group, however the YAML spells it (quotes,
// comments, flow style). Files that hold none (a kustomization.yaml, other objects) are skipped.
// A file that does not parse is a problem, not skipped: it may be a MiniCluster with a typo, and
// skipping it would drop its cluster from what a GitOps engine applies, which then prunes it.
func miniClusterFilesUnder(dir string, requireOne bool) ([]string, framework.Results) {
	var files []string
	var results framework.Results
	problem := func(file, msg string) {
		results = append(results, &framework.Result{Severity: framework.Error, Message: msg, File: &framework.File{Path: file}})
	}
	err := filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			problem(file, err.Error())
			return nil
		}
		if d.IsDir() || (filepath.Ext(file) != ".yaml" && filepath.Ext(file) != ".yml") {
			return nil
		}
		data, err := os.ReadFile(file)
		if err != nil {
			problem(file, err.Error())
			return nil
		}
		holds, err := holdsMiniCluster(data)
		switch {
		case err != nil:
			problem(file, "YAML does not parse: "+yamlSyntaxProblem(data, err)+
				"; every *.yaml and *.yml file under "+dir+" must parse, because any of them may hold a MiniCluster")
		case holds:
			files = append(files, file)
		}
		return nil
	})
	if err != nil {
		problem(dir, err.Error())
	}
	if requireOne && len(files) == 0 && len(results) == 0 {
		problem(dir, "no MiniCluster found in the *.yaml and *.yml files under this directory")
	}
	return files, results
}

// holdsMiniCluster tells whether a YAML stream has a document that is a MiniCluster. It reads any
// YAML (a list at the top, a plain configuration file), which kyaml's object reader refuses.
func holdsMiniCluster(data []byte) (bool, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	holds := false
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return holds, nil
		}
		if err != nil {
			return false, err
		}
		if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode && fn.IsMiniCluster(yaml.NewRNode(doc.Content[0])) {
			holds = true
		}
	}
}

// readInput reads a file named on the command line, "-" being stdin.
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(file)
}
