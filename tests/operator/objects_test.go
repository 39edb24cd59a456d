package operator

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// object is one Kubernetes object as generic JSON data.
type object map[string]any

func (o object) kind() string { s, _ := o["kind"].(string); return s }

func (o object) meta(key string) any {
	m, _ := o["metadata"].(map[string]any)
	return m[key]
}

func (o object) name() string { s, _ := o.meta("name").(string); return s }

func (o object) label(key string) string {
	m, _ := o.meta("labels").(map[string]any)
	s, _ := m[key].(string)
	return s
}

func parseStream(data []byte) ([]object, error) {
	var objs []object
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		doc = bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---"))
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var o object
		if err := yaml.Unmarshal(doc, &o); err != nil {
			return nil, err
		}
		if o != nil {
			objs = append(objs, o)
		}
	}
	return objs, nil
}

// Roles pair the operator's objects with ours: the names differ (hashed Job names, our keygen
// objects), what they are for does not.
const (
	roleEntrypoint = "entrypoint ConfigMap"
	roleHeadless   = "headless Service"
	roleBroker     = "broker Job"
	roleServices   = "services Pod"
	rolePortPrefix = "port Service "
	roleKeygen     = "keygen object"
	roleCurve      = "certificate object"
)

func operatorRole(o object) string {
	switch o.kind() {
	case "ConfigMap":
		if strings.HasSuffix(o.name(), "-entrypoint") {
			return roleEntrypoint
		}
	case "Service":
		spec, _ := o["spec"].(map[string]any)
		sel, _ := spec["selector"].(map[string]any)
		if _, ok := sel["job-name"]; ok {
			return roleHeadless
		}
		return rolePortPrefix + o.name()
	case "Pod":
		return roleServices
	case "Job":
		return roleBroker
	}
	return "operator " + o.kind() + " " + o.name()
}

func ourRole(o object) string {
	switch o.label("app.kubernetes.io/component") {
	case "entrypoint":
		return roleEntrypoint
	case "headless-service":
		return roleHeadless
	case "broker":
		return roleBroker
	case "services":
		return roleServices
	case "port-service":
		// Ours is <MiniCluster>-<container>, the operator's <container> (D-port-service-name).
		return rolePortPrefix + strings.TrimPrefix(o.name(), o.label("app.kubernetes.io/instance")+"-")
	case "keygen":
		return roleKeygen + " " + o.kind()
	case "curve":
		return roleCurve
	}
	return "our " + o.kind() + " " + o.name()
}

// leafDiff is one difference between a pair of objects, at a flattened path.
type leafDiff struct {
	role     string
	path     string
	operator any // nil: absent in the operator's object
	ours     any // nil: absent in ours
}

func (d leafDiff) String() string {
	return fmt.Sprintf("%s %s: operator %s, ours %s", d.role, d.path, show(d.operator), show(d.ours))
}

func show(v any) string {
	if v == nil {
		return "(absent)"
	}
	s := fmt.Sprintf("%v", v)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// flatten maps every leaf of v to its path. Lists of named things (containers, env, volumes,
// mounts, ports, items, tolerations) are keyed by name, so order and position do not matter where
// Kubernetes does not care; empty maps and lists are absent (as they are to the API server).
func flatten(prefix string, v any, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			flatten(prefix+"."+k, val, out)
		}
	case []any:
		for i, val := range x {
			flatten(prefix+"["+listKey(val, i)+"]", val, out)
		}
	case nil:
	default:
		out[prefix] = x
	}
}

// listKey names a list element by the field Kubernetes merges it on.
func listKey(v any, i int) string {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprint(i)
	}
	for _, k := range []string{"name", "mountPath", "containerPort", "key", "port"} {
		if s, ok := m[k]; ok {
			return fmt.Sprint(s)
		}
	}
	return fmt.Sprint(i)
}

// diffObjects compares two objects leaf by leaf.
func diffObjects(role string, operator, ours object) []leafDiff {
	a, b := map[string]any{}, map[string]any{}
	flatten("", map[string]any(operator), a)
	flatten("", map[string]any(ours), b)
	var diffs []leafDiff
	for p, av := range a {
		bv, ok := b[p]
		if !ok {
			diffs = append(diffs, leafDiff{role: role, path: p, operator: av})
		} else if !reflect.DeepEqual(av, bv) {
			diffs = append(diffs, leafDiff{role: role, path: p, operator: av, ours: bv})
		}
	}
	for p, bv := range b {
		if _, ok := a[p]; !ok {
			diffs = append(diffs, leafDiff{role: role, path: p, ours: bv})
		}
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].path < diffs[j].path })
	return diffs
}
