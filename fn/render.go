// Package fn is the KRM layer: a ResourceList comes in, its MiniClusters are decoded, defaulted and
// validated, their manifest sets are generated, and the ResourceList goes out with earlier output
// replaced, other items untouched and results for every problem.
package fn

import (
	"cmp"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/parallel"
)

const localConfigAnnotation = "config.kubernetes.io/local-config"

// Processor renders every MiniCluster of a ResourceList: Stream as the KRM function,
// WriteManifests as the render command, Check as the validate command. When any MiniCluster is
// invalid, each returns the framework.Results of severity error (all results are also in the
// ResourceList) and writes no generated object.
type Processor struct {
	// Standalone is set when the input comes from files given on the command line rather than from
	// an orchestrator; the MiniCluster is then never emitted, so its local-config annotation does
	// not matter.
	Standalone bool
}

// Check decodes, defaults and validates every MiniCluster of rl and generates their objects
// without writing them; the results are in rl.Results. The error is the error results when any
// MiniCluster is invalid.
func (p Processor) Check(rl *framework.ResourceList) error {
	_, err := p.render(rl)
	return err
}

// rendered is the outcome of render: the items to keep and the generated objects.
type rendered struct {
	// kept are the input items but an earlier run's output for these MiniClusters (kpt feeds its
	// output back in), ordered by file.
	kept []*yaml.RNode
	// generated holds the objects of each MiniCluster, in name order.
	generated []generatedSet
}

type generatedSet struct {
	src  *source
	objs []generators.Object
}

// render checks every MiniCluster of rl and generates their objects. Nothing is generated unless
// every MiniCluster is valid; results (warnings too) are added to rl.Results.
func (p Processor) render(rl *framework.ResourceList) (*rendered, error) {
	sources, results := p.collect(rl)
	// Output order follows the MiniClusters' names, not the order the files were read in.
	slices.SortStableFunc(sources, func(a, b *source) int {
		return cmp.Or(cmp.Compare(a.node.GetNamespace(), b.node.GetNamespace()), cmp.Compare(a.node.GetName(), b.node.GetName()))
	})
	type generation struct {
		objs  []generators.Object
		warns []generators.Warning
		err   error
	}
	generations := parallel.Map(len(sources), func(i int) generation {
		if sources[i].mc == nil {
			return generation{}
		}
		objs, warns, err := generators.Generate(sources[i].mc, sources[i].opts)
		return generation{objs, warns, err}
	})
	out := &rendered{}
	for i, src := range sources {
		g := generations[i]
		if src.mc == nil {
			continue
		}
		if g.err != nil {
			results = append(results, src.result(framework.Error, "", g.err.Error(), nil))
			continue
		}
		for _, w := range g.warns {
			results = append(results, src.result(framework.Warning, w.Field, w.Message, nil))
		}
		for _, n := range generators.Notes(src.mc, src.opts) {
			results = append(results, src.result(framework.Info, n.Field, n.Message, nil))
		}
		out.generated = append(out.generated, generatedSet{src, g.objs})
	}
	var dropped framework.Results
	out.kept, dropped = keepItems(rl.Items, rl.FunctionConfig, sources)
	results = append(results, nameCollisions(out.generated, out.kept)...)
	rl.Results = append(rl.Results, results...)
	if errs := withSeverity(results, framework.Error); len(errs) > 0 {
		return nil, errs
	}
	rl.Results = append(rl.Results, dropped...)
	slices.SortStableFunc(out.kept, byFile)
	return out, nil
}
