package fn

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

// ManifestSet is one MiniCluster's generated objects with the document and the file they came
// from: what a command that compares two renders (diff) reads, instead of their YAML.
type ManifestSet struct {
	// Source is the MiniCluster document as read; File is its file ("" for none).
	Source *yaml.RNode
	File   string
	// MiniCluster is the decoded MiniCluster, defaulted.
	MiniCluster *v1alpha2.MiniCluster
	Objects     []generators.Object
}

// Generate renders every MiniCluster of rl as WriteManifests does, with the same checks and
// results, and returns the objects of each MiniCluster (in name order) instead of writing them.
func (p Processor) Generate(rl *framework.ResourceList) ([]ManifestSet, error) {
	r, err := p.render(rl)
	if err != nil {
		return nil, err
	}
	sets := make([]ManifestSet, len(r.generated))
	for i, g := range r.generated {
		sets[i] = ManifestSet{Source: g.src.node, File: g.src.file, MiniCluster: g.src.mc, Objects: g.objs}
	}
	return sets, nil
}

// GenerateDocument decodes, defaults and validates one MiniCluster document and returns its
// generated objects; the error joins every problem found.
func GenerateDocument(doc []byte) ([]generators.Object, error) {
	c := checkDocument(doc)
	if len(c.errs) > 0 {
		return nil, c.errs.ToAggregate()
	}
	if c.mc == nil {
		return nil, errors.New("not a MiniCluster")
	}
	objs, _, err := generators.Generate(c.mc, c.opts)
	return objs, err
}
