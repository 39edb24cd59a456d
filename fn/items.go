package fn

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

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

// generatedBy tells whether item is output of an earlier run for one of the sources.
func generatedBy(item *yaml.RNode, sources []*source) bool {
	l := item.GetLabels()
	for _, src := range sources {
		if src.mc != nil && contract.IsGenerated(l, src.mc.Name) && item.GetNamespace() == src.mc.Namespace {
			return true
		}
	}
	return false
}

// byFile orders pass-through items by file and position, so the output does not depend on the
// order the orchestrator read the files in; items without a file keep their order.
func byFile(a, b *yaml.RNode) int {
	fa, ia := fileOf(a)
	fb, ib := fileOf(b)
	return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(ia, ib))
}

// pathAnnotationKeys are the path annotations generated objects get: the forms the input used, as
// kio.ReconcileInternalAnnotations gives the items of framework.Execute (none for kustomize; both
// when there are no items at all).
func pathAnnotationKeys(items []*yaml.RNode) []string {
	var keys []string
	//lint:ignore SA1019 the legacy form is what kpt and older kustomize read
	for _, key := range []string{kioutil.PathAnnotation, kioutil.LegacyPathAnnotation} {
		if len(items) == 0 || slices.ContainsFunc(items, func(n *yaml.RNode) bool { _, ok := n.GetAnnotations()[key]; return ok }) {
			keys = append(keys, key)
		}
	}
	return keys
}

// pathAnnotations are the annotations that file obj for kpt under the keys given.
func (g generatedSet) pathAnnotations(obj generators.Object, keys []string) map[string]string {
	if len(keys) == 0 {
		return nil
	}
	annotations := make(map[string]string, len(keys))
	for _, key := range keys {
		annotations[key] = outputFile(obj, g.src)
	}
	return annotations
}

// outputFile is a predictable file for a generated object next to its MiniCluster, for kpt:
// <dir>/<kind>_<name>.yaml, the name kyaml gives an object that has no path
// (kioutil.CreatePathAnnotationValue, without its namespace directory: the output must not depend on
// the namespace). Every generated name derives from its MiniCluster's, and two MiniClusters never
// generate the same kind and name (nameCollisions), so the files do not collide. They are in no
// directory of their own: kpt deletes the files of objects that are gone but never a directory,
// and a directory per MiniCluster would be left empty after a rename.
func outputFile(obj generators.Object, src *source) string {
	return path.Join(path.Dir(src.file), outputBase(obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName()))
}

func outputBase(kind, name string) string {
	return strings.ToLower(kind) + "_" + name + ".yaml"
}

// staleOutput tells whether item was written into the package by an earlier render for a
// MiniCluster that none of the sources is any more (renamed, moved to another namespace, or
// deleted from its file). Only objects in the file this function names them to count, so an
// output committed from `minicluster-fn render` stays.
func staleOutput(item *yaml.RNode, sources []*source) (string, bool) {
	l := item.GetLabels()
	instance := l[contract.LabelMiniCluster]
	if instance == "" || !contract.IsGenerated(l, instance) {
		return "", false
	}
	if slices.ContainsFunc(sources, func(src *source) bool {
		return src.mc != nil && src.mc.Name == instance && src.mc.Namespace == item.GetNamespace()
	}) {
		return "", false
	}
	file, _ := fileOf(item)
	want := outputBase(item.GetKind(), item.GetName())
	return instance, file == want || strings.HasSuffix(file, "/"+want)
}

// keepItems returns the items that stay: all but kustomize's copy of the functionConfig fc, the
// earlier output for the sources and stale output. Each MiniCluster whose stale output is dropped
// gets an info result.
//
// Stale output is what kpt needs of the function beyond kustomize. kpt writes every item to the
// file named by its path annotation and deletes the files of items that did not come back. The
// generated objects therefore get predictable files (outputFile), and objects this function wrote
// for a MiniCluster that is no longer in the package are dropped, so a rename leaves no files
// behind.
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
