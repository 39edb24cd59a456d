// Package fn is the KRM layer: a ResourceList comes in, its MiniClusters are decoded, defaulted and
// validated, their manifest sets are generated, and the ResourceList goes out with earlier output
// replaced, other items untouched and results for every problem.
package fn

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

const localConfigAnnotation = "config.kubernetes.io/local-config"

// Processor renders every MiniCluster of a ResourceList. It is a kyaml fn/framework
// ResourceListProcessor (Process); Stream runs it as the KRM function, WriteManifests as the render
// command, Check as the validate command.
type Processor struct {
	// Standalone is set when the input comes from files given on the command line rather than from
	// an orchestrator; the MiniCluster is then never emitted, so its local-config annotation does
	// not matter.
	Standalone bool
}

// When any MiniCluster is invalid, the processor's error is the framework.Results of severity
// error (all results are also in the ResourceList), and the items are left as they came in, so
// nothing half-rendered is written.

// source is one MiniCluster found in the input.
type source struct {
	node  *yaml.RNode
	mc    *v1alpha2.MiniCluster
	opts  v1alpha2.Options
	file  string
	index int
}

// Process is the KRM function as a kyaml framework processor: the items that stay, then the
// generated objects, as RNodes.
func (p Processor) Process(rl *framework.ResourceList) error {
	pathKeys := pathAnnotationKeys(rl.Items)
	r, err := p.render(rl)
	if err != nil {
		return err
	}
	items := r.kept
	for _, g := range r.generated {
		for _, obj := range g.objs {
			text, err := encodeObject(obj, g.pathAnnotations(obj, pathKeys))
			if err != nil {
				return err
			}
			node, err := yaml.Parse(string(text))
			if err != nil {
				return err
			}
			items = append(items, node)
		}
	}
	rl.Items = items
	return nil
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
	generations := parallelMap(len(sources), func(i int) generation {
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

// collect finds the MiniClusters among the items and the functionConfig, decodes and checks them.
func (p Processor) collect(rl *framework.ResourceList) ([]*source, framework.Results) {
	var nodes []*yaml.RNode
	for _, item := range rl.Items {
		if IsMiniCluster(item) {
			nodes = append(nodes, item)
		}
	}
	// kustomize passes the functionConfig as an item too; kpt with configPath passes it as both.
	// A functionConfig that is a MiniCluster but not among the items is rendered as well.
	if fc := rl.FunctionConfig; fc != nil && IsMiniCluster(fc) && !slices.ContainsFunc(nodes, func(n *yaml.RNode) bool { return sameObject(n, fc) }) {
		nodes = append(nodes, fc)
	}
	var results framework.Results
	if len(nodes) == 0 {
		results = append(results, &framework.Result{Severity: framework.Error,
			Message: "no MiniCluster found: expected a flux-framework.org/v1alpha2 MiniCluster as functionConfig or among the items"})
	}
	// Decoding and checking is independent per MiniCluster; the rest needs them all, in order.
	checked := parallelMap(len(nodes), func(i int) checkedSource { return check(nodes[i]) })
	var sources []*source
	seen := map[string]*source{}
	for i, node := range nodes {
		src := &source{node: node, opts: checked[i].opts}
		src.file, src.index = fileOf(node)
		sources = append(sources, src)
		mc, errs := checked[i].mc, checked[i].errs
		for _, e := range errs {
			results = append(results, src.fieldResult(e))
		}
		if len(errs) > 0 {
			continue
		}
		src.mc = mc
		key := mc.Namespace + "/" + mc.Name
		if other, dup := seen[key]; dup {
			results = append(results, src.result(framework.Error, "metadata.name",
				fmt.Sprintf("MiniCluster %q is defined twice: in %s and in %s; names must be unique per namespace", mc.Name, describeFile(other), describeFile(src)), nil))
			src.mc = nil
			continue
		}
		seen[key] = src
		// Only a MiniCluster that is an item lives in the package and could be applied with it.
		if !p.Standalone && node != rl.FunctionConfig && node.GetAnnotations()[localConfigAnnotation] != "true" {
			results = append(results, src.result(framework.Warning, "metadata.annotations",
				`has no config.kubernetes.io/local-config: "true": a tool that applies this package would send the MiniCluster to a cluster without its CRD and fail; add the annotation`, nil))
		}
	}
	for _, item := range rl.Items {
		if w := hpaWarning(item); w != nil {
			results = append(results, w)
		}
	}
	if w := ignoredFunctionConfig(rl.FunctionConfig); w != nil {
		results = append(results, w)
	}
	return sources, results
}

// checkedSource is a MiniCluster item decoded, defaulted and validated; mc is nil when it could not
// be decoded.
type checkedSource struct {
	mc   *v1alpha2.MiniCluster
	opts v1alpha2.Options
	errs field.ErrorList
}

func check(node *yaml.RNode) checkedSource {
	mc, errs := v1alpha2.Decode([]byte(node.MustString()))
	if mc == nil {
		return checkedSource{errs: errs}
	}
	mc.Default()
	opts, optErrs := mc.ParseOptions()
	errs = append(append(errs, optErrs...), mc.Validate(opts)...)
	return checkedSource{mc: mc, opts: opts, errs: errs}
}

// IsMiniCluster tells whether an item is a Flux Framework MiniCluster.
func IsMiniCluster(n *yaml.RNode) bool {
	return n.GetKind() == v1alpha2.Kind && strings.HasPrefix(n.GetApiVersion(), v1alpha2.Group+"/")
}

// isKustomizeGeneratorCopy tells whether item is the copy of the functionConfig that kustomize's
// exec/container generator adds to the input only so that its pipeline has an item to run on
// (kustomize api internal/plugins/fnplugin); kustomize marks it local-config and drops it from
// the build. It is the only item a generator run has and, unlike a file of a kpt package or of
// `render`, it has no path annotation. It is not returned: kustomize copies the comments of every
// returned item that still carries its id back from the input, and for that walk it parses its
// whole built-in OpenAPI schema, which took 45-60 ms of each `kustomize build` on the bench VM.
func isKustomizeGeneratorCopy(item, fc *yaml.RNode) bool {
	if fc == nil || !IsMiniCluster(item) || !sameObject(item, fc) || item.GetAnnotations()[localConfigAnnotation] != "true" {
		return false
	}
	file, _ := fileOf(item)
	return file == ""
}

func sameObject(a, b *yaml.RNode) bool {
	return a.GetKind() == b.GetKind() && a.GetName() == b.GetName() && a.GetNamespace() == b.GetNamespace()
}

// generatedBy tells whether item is output of an earlier run for one of the sources.
func generatedBy(item *yaml.RNode, sources []*source) bool {
	l := item.GetLabels()
	for _, src := range sources {
		if src.mc != nil && generators.IsGenerated(l, src.mc.Name) && item.GetNamespace() == src.mc.Namespace {
			return true
		}
	}
	return false
}

// hpaWarning flags a HorizontalPodAutoscaler that scales a MiniCluster: that needs the operator's
// scale subresource.
func hpaWarning(item *yaml.RNode) *framework.Result {
	if item.GetKind() != "HorizontalPodAutoscaler" {
		return nil
	}
	kind, _ := item.GetString("spec.scaleTargetRef.kind")
	if kind != v1alpha2.Kind {
		return nil
	}
	file, index := fileOf(item)
	r := &framework.Result{
		Severity: framework.Warning,
		Message: "scales a MiniCluster, which needs the operator's scale subresource; without the operator, " +
			"change spec.size in Git (up to spec.maxSize) instead",
		ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: item.GetApiVersion(), Kind: item.GetKind()},
			NameMeta: yaml.NameMeta{Name: item.GetName(), Namespace: item.GetNamespace()}},
		Field: &framework.Field{Path: "spec.scaleTargetRef"},
	}
	if file != "" {
		r.File = &framework.File{Path: file, Index: index}
	}
	return r
}

func (s *source) ref() *yaml.ResourceIdentifier {
	return &yaml.ResourceIdentifier{
		TypeMeta: yaml.TypeMeta{APIVersion: s.node.GetApiVersion(), Kind: s.node.GetKind()},
		NameMeta: yaml.NameMeta{Name: s.node.GetName(), Namespace: s.node.GetNamespace()},
	}
}

func (s *source) result(sev framework.Severity, fieldPath, msg string, current any) *framework.Result {
	r := &framework.Result{Severity: sev, Message: msg, ResourceRef: s.ref()}
	if fieldPath != "" {
		r.Field = &framework.Field{Path: fieldPath, CurrentValue: current}
	}
	if s.file != "" {
		r.File = &framework.File{Path: s.file, Index: s.index}
	}
	return r
}

func (s *source) fieldResult(e *field.Error) *framework.Result {
	var current any
	if e.BadValue != nil {
		if _, omit := e.BadValue.(field.OmitValueType); !omit {
			current = e.BadValue
		}
	}
	fieldPath := e.Field
	if fieldPath == "<nil>" {
		fieldPath = ""
	}
	return s.result(framework.Error, fieldPath, e.ErrorBody(), current)
}

func describeFile(s *source) string {
	if s.file == "" {
		return "the functionConfig"
	}
	return s.file
}

// fileOf reads the orchestrator's path and index annotations.
func fileOf(n *yaml.RNode) (string, int) {
	a := n.GetAnnotations()
	// kpt and older kustomize still send only the legacy config.kubernetes.io forms.
	//lint:ignore SA1019 read on purpose, see above
	file := cmp.Or(a[kioutil.PathAnnotation], a[kioutil.LegacyPathAnnotation])
	//lint:ignore SA1019 read on purpose, see above
	index, _ := strconv.Atoi(cmp.Or(a[kioutil.IndexAnnotation], a[kioutil.LegacyIndexAnnotation]))
	return file, index
}

// byFile orders pass-through items by file and position, so the output does not depend on the
// order the orchestrator read the files in; items without a file keep their order.
func byFile(a, b *yaml.RNode) int {
	fa, ia := fileOf(a)
	fb, ib := fileOf(b)
	return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(ia, ib))
}

// withSeverity are the results of one severity.
func withSeverity(rs framework.Results, sev framework.Severity) framework.Results {
	var out framework.Results
	for _, r := range rs {
		if r.Severity == sev {
			out = append(out, r)
		}
	}
	return out
}
