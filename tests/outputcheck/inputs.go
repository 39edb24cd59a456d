package outputcheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
)

// Input is one MiniCluster document of a file.
type Input struct {
	// Name is the file relative to its directory, with "#<n>" for the n-th MiniCluster of a file
	// holding several.
	Name string
	Doc  []byte
}

// CorpusEnv names the corpus directory when it is not ../shared/corpus/flux-operator-examples
// beside the repository.
const CorpusEnv = "MINICLUSTER_FN_CORPUS"

// ErrNoCorpus is returned by Corpus when the corpus is absent; tests skip then.
var ErrNoCorpus = errors.New("the flux-operator examples corpus (../shared/corpus/flux-operator-examples beside the repository, or $" + CorpusEnv + ") is not present")

// Examples are the MiniClusters of the repository's examples/ directory.
func Examples() ([]Input, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	return miniClusterDocs(filepath.Join(root, "examples"))
}

// Corpus are the MiniClusters of the operator's example corpus, or ErrNoCorpus.
func Corpus() ([]Input, error) {
	dir := os.Getenv(CorpusEnv)
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return nil, err
		}
		dir = filepath.Join(root, "..", "shared", "corpus", "flux-operator-examples")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, ErrNoCorpus
	}
	return miniClusterDocs(dir)
}

// repoRoot is the directory of this module's go.mod, found upwards from the working directory
// (a test's package directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(mod), "module github.com/minicluster-fn/minicluster-fn\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the minicluster-fn go.mod is not above the working directory")
		}
		dir = parent
	}
}

// miniClusterDocs are the MiniCluster documents of the .yaml files under dir, sorted by file.
func miniClusterDocs(dir string) ([]Input, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var inputs []Input
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, f)
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		var docs [][]byte
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			var head struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if yaml.Unmarshal(doc, &head) == nil && head.APIVersion == v1alpha2.APIVersion && head.Kind == v1alpha2.Kind {
				docs = append(docs, doc)
			}
		}
		for i, doc := range docs {
			name := rel
			if len(docs) > 1 {
				name = fmt.Sprintf("%s#%d", rel, i)
			}
			inputs = append(inputs, Input{Name: name, Doc: doc})
		}
	}
	return inputs, nil
}

// Prepare decodes, defaults and validates a MiniCluster document as fn does before it
// generates; errs holds every problem.
func Prepare(doc []byte) (*v1alpha2.MiniCluster, v1alpha2.Options, field.ErrorList) {
	mc, errs := v1alpha2.Decode(doc)
	if mc == nil || len(errs) > 0 {
		return nil, v1alpha2.Options{}, errs
	}
	mc.Default()
	opts, errs := mc.ParseOptions()
	errs = append(errs, mc.Validate(opts)...)
	return mc, opts, errs
}

// AddSeeds adds the document of every example and corpus MiniCluster (the corpus when present) to
// a fuzz target's seed corpus.
func AddSeeds(f *testing.F) {
	examples, err := Examples()
	if err != nil {
		f.Fatal(err)
	}
	corpus, err := Corpus()
	if err != nil && !errors.Is(err, ErrNoCorpus) {
		f.Fatal(err)
	}
	for _, in := range append(examples, corpus...) {
		f.Add(in.Doc)
	}
}
