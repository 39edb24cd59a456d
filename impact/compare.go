package impact

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/minicluster-fn/minicluster-fn/fn"
	"github.com/minicluster-fn/minicluster-fn/internal/parallel"
)

// Compare says what changing the MiniClusters old into new does to each, sorted by namespace and
// name. A MiniCluster is the same on both sides when its namespace and name are: a rename is a
// removal and an addition, and says so.
func Compare(old, new []Set) []Result {
	oldByKey := make(map[string]*Set, len(old))
	newByKey := make(map[string]*Set, len(new))
	for i := range old {
		oldByKey[old[i].key()] = &old[i]
	}
	for i := range new {
		newByKey[new[i].key()] = &new[i]
	}
	keys := slices.Collect(maps.Keys(oldByKey))
	for k := range newByKey {
		if _, ok := oldByKey[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	results := parallel.Map(len(keys), func(i int) Result { return compareOne(oldByKey[keys[i]], newByKey[keys[i]]) })
	noteRenames(results, oldByKey, newByKey)
	return results
}

func compareOne(old, new *Set) Result {
	switch {
	case new == nil:
		return Result{Namespace: old.Namespace, Name: old.Name, Impact: Removed, Effect: removedEffect(old), Objects: allObjects(old, Pruned)}
	case old == nil:
		return Result{Namespace: new.Namespace, Name: new.Name, Impact: Added, Effect: addedEffect(new), Objects: allObjects(new, Created)}
	}
	v := classify(old.Objects, new.Objects, new.MaxSize)
	r := Result{Namespace: new.Namespace, Name: new.Name, Impact: v.kind, Effect: v.effect, Objects: v.objects}
	switch {
	case old.Source != nil && new.Source != nil && v.kind == Unchanged:
		if paths := changedPaths(old.Source, new.Source); len(paths) > 0 {
			r.Notes = append(r.Notes, "changed in the MiniCluster, but in none of its objects: "+strings.Join(paths, ", "))
		}
	case old.Source != nil && new.Source != nil:
		r.Causes = sourceCauses(old, new, v)
	case v.kind >= ResizedInPlace:
		r.Causes = objectCauses(old.Objects, new.Objects, v)
	}
	if old.File != "" && new.File != "" && old.File != new.File {
		r.Notes = append(r.Notes, fmt.Sprintf("moved from %s to %s", old.File, new.File))
	}
	return r
}

func allObjects(s *Set, change Change) []ObjectChange {
	var changes []ObjectChange
	for _, o := range s.Objects {
		changes = append(changes, ObjectChange{Object: displayID(o), Change: change})
	}
	return changes
}

func removedEffect(s *Set) string {
	broker := findBroker(s)
	if broker == nil {
		return "its objects are pruned"
	}
	effect := fmt.Sprintf("broker Job %s is pruned: its running work ends", broker.GetName())
	switch c := certificateOf(s.Objects, broker); c.origin {
	case "yours, not rendered":
		return effect + fmt.Sprintf("; the certificate %s is yours and stays", c.object)
	default:
		return effect + fmt.Sprintf("; the certificate %s is deleted with it", c.object)
	}
}

func addedEffect(s *Set) string {
	broker := findBroker(s)
	if broker == nil {
		return "its objects are created"
	}
	return fmt.Sprintf("broker Job %s starts, with the certificate %s", broker.GetName(), certificateOf(s.Objects, broker))
}

func findBroker(s *Set) *unstructured.Unstructured {
	for _, o := range s.Objects {
		if isBrokerJob(o) {
			return o
		}
	}
	return nil
}

// noteRenames pairs each removed MiniCluster with an added one of the same namespace that has the
// same spec, or that comes from the same file, or, in rendered output, that is the only one added
// where it is the only one removed: that is a rename, and a rename is a removal and an addition,
// not an edit.
func noteRenames(results []Result, old, new map[string]*Set) {
	removedIn, addedIn := map[string]int{}, map[string]int{}
	for _, r := range results {
		switch r.Impact {
		case Removed:
			removedIn[r.Namespace]++
		case Added:
			addedIn[r.Namespace]++
		}
	}
	for i := range results {
		removed := &results[i]
		if removed.Impact != Removed {
			continue
		}
		from := old[removed.ID()]
		for j := range results {
			added := &results[j]
			if added.Impact != Added || added.Namespace != removed.Namespace {
				continue
			}
			to := new[added.ID()]
			onlyPair := from.Source == nil && removedIn[from.Namespace] == 1 && addedIn[from.Namespace] == 1
			if !onlyPair && !sameSpec(from, to) && (from.File == "" || from.File != to.File) {
				continue
			}
			removed.Notes = append(removed.Notes, fmt.Sprintf("renamed to %s? A rename is a removal and an addition: the running cluster ends, and %s starts anew", added.Name, added.Name))
			added.Notes = append(added.Notes, fmt.Sprintf("renamed from %s? A rename is a removal and an addition", removed.Name))
			break
		}
	}
}

func sameSpec(a, b *Set) bool {
	if a.Source == nil || b.Source == nil {
		return false
	}
	return reflect.DeepEqual(a.Source["spec"], b.Source["spec"])
}

// sourceCauses names the MiniCluster's fields whose change has the impact found: every field that
// changed when there is one, or the impact is not a restart or a resize; else each changed field
// is applied alone to the old MiniCluster, which is rendered again, and the fields that alone give
// the impact are the causes: those that alone give the same impact, else those that alone restart
// the brokers (a new certificate found with another change that replaces the Job), else all of
// them, when only their combination does.
func sourceCauses(old, new *Set, v verdict) []string {
	var changes []fieldChange
	diffTrees(old.Source, new.Source, nil, nil, &changes)
	all := make([]string, len(changes))
	for i, c := range changes {
		all[i] = c.path
	}
	if len(changes) <= 1 || v.kind < ResizedInPlace {
		return all
	}
	var exact, restart []string
	for _, c := range changes {
		doc, ok := c.apply(deepCopy(old.Source))
		if !ok {
			continue
		}
		data, err := json.Marshal(doc)
		if err != nil {
			continue
		}
		typed, err := fn.GenerateDocument(data)
		if err != nil {
			continue // valid only together with another change
		}
		objs, err := toUnstructured(typed)
		if err != nil {
			continue
		}
		switch alone := classify(old.Objects, objs, new.MaxSize).kind; {
		case alone == v.kind:
			exact = append(exact, c.path)
		case v.kind >= Replaced && alone >= Replaced:
			restart = append(restart, c.path)
		}
	}
	switch {
	case len(exact) > 0:
		return exact
	case len(restart) > 0:
		return restart
	}
	return all
}
