package fn

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/generators"
)

// objectID is what kustomize, kpt and the API server tell objects apart by. Two objects with the
// same one fail `kustomize build` ("already registered id"), which stops a Flux CD Kustomization
// or an Argo CD Application from syncing anything, or one silently overwrites the other on apply.
type objectID struct {
	group, kind, namespace, name string
}

func (id objectID) String() string {
	s := id.kind
	if id.group != "" {
		s += "." + id.group
	}
	if id.namespace != "" {
		s += "/" + id.namespace
	}
	return s + "/" + id.name
}

// nameCollisions refuses objects that two MiniClusters of one invocation would both generate, and
// generated objects that an input item already is. Most names derive from metadata.name, but not
// all (spec.network.headlessName names the headless Service and the certificate, and names built
// from several parts can meet), so every generated object is checked rather than a list of fields.
func nameCollisions(sets []generatedSet, kept []*yaml.RNode) framework.Results {
	type generatedBy struct {
		src   *source
		field string // the field the name comes from
	}
	var results framework.Results
	owner := map[objectID]generatedBy{}
	for _, g := range sets {
		for _, obj := range g.objs {
			gvk := obj.GetObjectKind().GroupVersionKind()
			id := objectID{gvk.Group, gvk.Kind, obj.GetNamespace(), obj.GetName()}
			this := generatedBy{g.src, generators.NamedBy(obj)}
			other, taken := owner[id]
			switch {
			case !taken:
				owner[id] = this
			case other.src == g.src:
				results = append(results, g.src.result(framework.Error, this.field, fmt.Sprintf(
					"MiniCluster %q would generate %s twice; change the field named here", g.src.mc.Name, id), nil))
			default:
				// Both are named, so that neither looks fine on its own (validate's "ok:" lines).
				msg := fmt.Sprintf("MiniCluster %q (%s) and MiniCluster %q (%s) would both generate %s, and kustomize, kpt and "+
					"the GitOps engines refuse two objects of the same kind, namespace and name; rename one of them (or change the field named here)",
					other.src.mc.Name, describeFile(other.src), g.src.mc.Name, describeFile(g.src), id)
				results = append(results, other.src.result(framework.Error, other.field, msg, nil), g.src.result(framework.Error, this.field, msg, nil))
			}
		}
	}
	for _, item := range kept {
		gv, _ := schema.ParseGroupVersion(item.GetApiVersion())
		id := objectID{gv.Group, item.GetKind(), item.GetNamespace(), item.GetName()}
		if g, taken := owner[id]; taken {
			file, _ := fileOf(item)
			if file == "" {
				file = "the input"
			}
			results = append(results, g.src.result(framework.Error, g.field, fmt.Sprintf(
				"MiniCluster %q would generate %s, which %s already holds; rename one of them", g.src.mc.Name, id, file), nil))
		}
	}
	return results
}
