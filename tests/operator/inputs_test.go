package operator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// input is one MiniCluster file the operator and we both render.
type input struct {
	label string // examples/hello-world/minicluster.yaml, corpus/tests/post/minicluster.yaml, fields/...
	path  string
}

// inputs: every MiniCluster of examples/, every corpus file of ../shared and our field-coverage set.
func inputs(t testing.TB) []input {
	t.Helper()
	root := repoRoot(t)
	var in []input
	add := func(label, dir string) {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			objs, err := parseStream(data)
			if err != nil || len(objs) != 1 || objs[0].kind() != "MiniCluster" {
				return nil // not a MiniCluster file (kustomizations, Argo CD Applications, ...)
			}
			rel, _ := filepath.Rel(dir, p)
			in = append(in, input{label: label + "/" + rel, path: p})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	add("examples", filepath.Join(root, "examples"))
	add("corpus", filepath.Join(sharedDir(t), "corpus", "flux-operator-examples"))
	add("fields", filepath.Join(root, "tests", "operator", "testdata", "fields"))
	slices.SortFunc(in, func(a, b input) int { return strings.Compare(a.label, b.label) })
	return in
}
