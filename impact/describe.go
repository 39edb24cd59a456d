package impact

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

// objectCauses says, for rendered output (no MiniCluster at hand), what changed in the objects
// that restarts or resizes the brokers, in the terms of the MiniCluster: the certificate, the
// broker pods' containers and volumes (container flux-sample: command), the broker scripts.
func objectCauses(old, new []*unstructured.Unstructured, v verdict) []string {
	if v.oldBroker == nil || v.newBroker == nil {
		return nil
	}
	var causes []string
	if v.oldCert != v.newCert {
		causes = append(causes, fmt.Sprintf("certificate %s → %s", v.oldCert, v.newCert))
	}
	oldSpec, _, _ := unstructured.NestedMap(v.oldBroker.Object, "spec")
	newSpec, _, _ := unstructured.NestedMap(v.newBroker.Object, "spec")
	if v.kind == ResizedInPlace || v.kind == Requeued {
		return append(causes, "broker Job parallelism and completions")
	}
	// The broker Job refers to its entrypoint ConfigMap by a name that follows its own: compare
	// the old spec as if it had the new names.
	oldEntrypoint, newEntrypoint := entrypointOf(v.oldBroker), entrypointOf(v.newBroker)
	renames := map[string]string{v.oldBroker.GetName(): v.newBroker.GetName(), oldEntrypoint: newEntrypoint}
	oldSpec = substitute(oldSpec, renames).(map[string]any)
	for _, m := range []map[string]any{oldSpec, newSpec} {
		delete(m, "parallelism")
		delete(m, "completions")
	}
	var changes []fieldChange
	diffTrees(oldSpec, newSpec, nil, nil, &changes)
	for _, c := range changes {
		causes = append(causes, describeJobPath(c, oldSpec, newSpec)...)
	}
	oldScripts, newScripts := configMapData(old, oldEntrypoint, v.oldBroker), configMapData(new, newEntrypoint, v.newBroker)
	if oldScripts != nil && newScripts != nil {
		containers := listAt(newSpec, "template", "spec", "containers")
		for _, c := range changedPaths(oldScripts, newScripts) {
			causes = append(causes, describeScript(strings.Trim(strings.TrimPrefix(c, "["), "]"), containers))
		}
	}
	causes = slices.Compact(causes)
	if len(causes) == 0 && v.oldBroker.GetName() != v.newBroker.GetName() {
		causes = append(causes, fmt.Sprintf("the broker Job's name %s → %s", v.oldBroker.GetName(), v.newBroker.GetName()))
	}
	return causes
}

// entrypointOf is the name of the ConfigMap of scripts the broker pods mount.
func entrypointOf(broker *unstructured.Unstructured) string {
	volumes, _, _ := unstructured.NestedSlice(broker.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		vol, _ := v.(map[string]any)
		if vol["name"] == v1alpha2.VolumeEntrypoint {
			name, _, _ := unstructured.NestedString(vol, "configMap", "name")
			return name
		}
	}
	return ""
}

func configMapData(objs []*unstructured.Unstructured, name string, broker *unstructured.Unstructured) map[string]any {
	for _, o := range objs {
		if o.GetKind() == "ConfigMap" && o.GetName() == name && o.GetNamespace() == broker.GetNamespace() {
			data, _, _ := unstructured.NestedMap(o.Object, "data")
			return data
		}
	}
	return nil
}

// substitute is a copy of a JSON tree in which every string that is a key of renames is replaced.
func substitute(v any, renames map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = substitute(x, renames)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = substitute(x, renames)
		}
		return l
	case string:
		if to, ok := renames[v]; ok {
			return to
		}
	}
	return v
}

// podLists are the lists of the pod spec whose items have a name, and what a user calls an item.
var podLists = map[string]string{"containers": "container", "initContainers": "init container", "volumes": "volume"}

// itemLists are the lists of a container whose items have a name.
var itemLists = map[string]string{"env": "env", "volumeMounts": "mount", "ports": "port"}

// describeJobPath says where in the broker Job a change is, as a user names it: the Job's own
// fields by their path, the pod template's by container or volume and field.
func describeJobPath(c fieldChange, oldSpec, newSpec map[string]any) []string {
	steps := c.steps
	if len(steps) < 2 || steps[0] != "template" {
		return []string{"broker Job spec." + strings.TrimPrefix(c.path, ".")}
	}
	if steps[1] == "metadata" {
		return []string{"broker pods' " + strings.Join(stringSteps(steps[2:min(3, len(steps))]), ".")}
	}
	pod := steps[2:]
	if len(pod) == 0 {
		return []string{"broker pod spec"}
	}
	listName, _ := pod[0].(string)
	word, named := podLists[listName]
	if !named {
		return []string{"broker pods' " + listName}
	}
	oldItems := listAt(oldSpec, "template", "spec", listName)
	newItems := listAt(newSpec, "template", "spec", listName)
	if c.tail {
		var out []string
		for i := c.from; i < len(newItems); i++ {
			out = append(out, fmt.Sprintf("%s %s added", word, itemName(newItems[i], i)))
		}
		for i := c.from; i < len(oldItems); i++ {
			out = append(out, fmt.Sprintf("%s %s removed", word, itemName(oldItems[i], i)))
		}
		return out
	}
	if len(pod) < 2 {
		return []string{"broker pods' " + listName}
	}
	index, _ := pod[1].(int)
	var item any
	if index < len(newItems) {
		item = newItems[index]
	}
	where := fmt.Sprintf("%s %s", word, itemName(item, index))
	if len(pod) < 3 {
		return []string{where}
	}
	field, _ := pod[2].(string)
	if inner, ok := itemLists[field]; ok && len(pod) >= 4 {
		if i, ok := pod[3].(int); ok {
			itemMap, _ := item.(map[string]any)
			innerItems, _ := itemMap[field].([]any)
			var x any
			if i < len(innerItems) {
				x = innerItems[i]
			}
			return []string{fmt.Sprintf("%s: %s %s", where, inner, itemName(x, i))}
		}
	}
	return []string{where + ": " + field}
}

func listAt(m map[string]any, path ...string) []any {
	l, _, _ := unstructured.NestedSlice(m, path...)
	return l
}

// itemName is an item's name, or its index in brackets.
func itemName(item any, index int) string {
	if m, ok := item.(map[string]any); ok {
		if name, ok := m["name"].(string); ok && name != "" {
			return name
		}
		if port, ok := m["containerPort"]; ok {
			return fmt.Sprint(port)
		}
	}
	return fmt.Sprintf("[%d]", index)
}

func stringSteps(steps []any) []string {
	var out []string
	for _, s := range steps {
		out = append(out, fmt.Sprint(s))
	}
	return out
}

// describeScript names a key of the entrypoint ConfigMap after what it serves: the broker script
// or the wrapper of a container (which holds its command), or the broker's config.
func describeScript(key string, containers []any) string {
	for i, c := range containers {
		if key == generators.WaitScriptKey(i) || key == generators.StartScriptKey(i) {
			return fmt.Sprintf("container %s: script %s (its command and setup)", itemName(c, i), key)
		}
	}
	return "broker script " + key
}
