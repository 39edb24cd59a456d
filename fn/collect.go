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
	"github.com/minicluster-fn/minicluster-fn/internal/parallel"
)

// source is one MiniCluster found in the input.
type source struct {
	node  *yaml.RNode
	mc    *v1alpha2.MiniCluster
	opts  v1alpha2.Options
	file  string
	index int
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
	checked := parallel.Map(len(nodes), func(i int) checkedSource { return check(nodes[i]) })
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

func check(node *yaml.RNode) checkedSource { return checkDocument([]byte(node.MustString())) }

// checkDocument decodes, defaults and validates one MiniCluster document.
func checkDocument(doc []byte) checkedSource {
	mc, errs := v1alpha2.Decode(doc)
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

func sameObject(a, b *yaml.RNode) bool {
	return a.GetKind() == b.GetKind() && a.GetName() == b.GetName() && a.GetNamespace() == b.GetNamespace()
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
