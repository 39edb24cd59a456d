package fn

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

// What kpt needs of the function beyond kustomize. kpt writes every item to the file named by its
// path annotation and deletes the files of items that did not come back. The generated objects
// therefore get predictable files, and objects this function wrote for a MiniCluster that is no
// longer in the package are dropped, so a rename leaves no files behind.

// outputFile is a predictable file for a generated object next to its MiniCluster, for kpt:
// <dir>/<minicluster>/<kind>_<name>.yaml.
func outputFile(obj generators.Object, src *source) string {
	return path.Join(path.Dir(src.file), outputBase(src.mc.Name, obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName()))
}

func outputBase(miniCluster, kind, name string) string {
	return path.Join(miniCluster, strings.ToLower(kind)+"_"+name+".yaml")
}

// staleOutput tells whether item was written into the package by an earlier render for a
// MiniCluster that none of the sources is any more (renamed, moved to another namespace, or
// deleted from its file). Only objects in the file this function names them to count, so an
// output committed from `minicluster-fn render` stays.
func staleOutput(item *yaml.RNode, sources []*source) (string, bool) {
	l := item.GetLabels()
	instance := l[generators.LabelInstance]
	if instance == "" || !generators.IsGenerated(l, instance) {
		return "", false
	}
	if slices.ContainsFunc(sources, func(src *source) bool {
		return src.mc != nil && src.mc.Name == instance && src.mc.Namespace == item.GetNamespace()
	}) {
		return "", false
	}
	file, _ := fileOf(item)
	want := outputBase(instance, item.GetKind(), item.GetName())
	return instance, file == want || strings.HasSuffix(file, "/"+want)
}

// keepItems returns the items that stay: all but kustomize's copy of the functionConfig fc, the
// earlier output for the sources and stale output. Each MiniCluster whose stale output is dropped
// gets an info result.
func keepItems(items []*yaml.RNode, fc *yaml.RNode, sources []*source) ([]*yaml.RNode, framework.Results) {
	var kept []*yaml.RNode
	dropped := map[string]int{}
	for _, item := range items {
		if isKustomizeGeneratorCopy(item, fc) || generatedBy(item, sources) {
			continue
		}
		if instance, stale := staleOutput(item, sources); stale {
			dropped[instance]++
			continue
		}
		kept = append(kept, item)
	}
	var results framework.Results
	for _, name := range slices.Sorted(maps.Keys(dropped)) {
		results = append(results, &framework.Result{Severity: framework.Info, Message: fmt.Sprintf(
			"removed %d object(s) generated earlier for MiniCluster %q, which is no longer in the package", dropped[name], name)})
	}
	return kept, results
}

// ignoredFunctionConfig warns about a functionConfig that is not a MiniCluster, such as the
// ConfigMap kpt makes of `kpt fn eval ... -- key=value` or of a Kptfile's configMap: the function
// has no settings of its own, so whatever it says has no effect.
func ignoredFunctionConfig(fc *yaml.RNode) *framework.Result {
	if fc == nil || fc.GetKind() == "" || IsMiniCluster(fc) {
		return nil
	}
	return &framework.Result{Severity: framework.Warning, Message: fmt.Sprintf(
		"the functionConfig %s/%s is not a MiniCluster and is ignored: minicluster-fn has no settings; it renders the MiniClusters "+
			"among the items, and options go into their %s annotations", fc.GetKind(), fc.GetName(), v1alpha2.OptionPrefix)}
}
