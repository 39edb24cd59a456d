package impact

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldChange is one difference between two documents (trees of maps, lists and scalars, as JSON
// decodes them): the path, as the user writes it (spec.containers[0].command), and where it is,
// so that it can be applied to another document. Lists are compared item by item; items added or
// removed at the end of a list are one change, at the list.
type fieldChange struct {
	path  string
	steps []any // map keys (string) and list indices (int)
	// tail is set for a list whose length changed: from is the first index that differs in
	// length, and new is the new list.
	tail bool
	from int
	// new is the value in the new document; absent when it has none.
	new    any
	absent bool
}

// identifier is a map key written as .key in a path; any other key is written [key].
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// diffTrees appends the changes from a to b.
func diffTrees(a, b any, p *field.Path, steps []any, out *[]fieldChange) {
	if reflect.DeepEqual(a, b) {
		return
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := slices.Sorted(maps.Keys(av))
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			child := childPath(p, k)
			s := append(slices.Clip(steps), k)
			ak, inA := av[k]
			bk, inB := bv[k]
			// A map added or removed as a whole is its fields added or removed, so that the
			// path names the field the user wrote (spec.network.headlessName).
			switch am, bm := asMap(ak), asMap(bk); {
			case !inA && bm != nil:
				diffTrees(map[string]any{}, bm, child, s, out)
			case !inB && am != nil:
				diffTrees(am, map[string]any{}, child, s, out)
			case !inA || !inB:
				*out = append(*out, fieldChange{path: child.String(), steps: s, new: bk, absent: !inB})
			default:
				diffTrees(ak, bk, child, s, out)
			}
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		common := min(len(av), len(bv))
		for i := range common {
			diffTrees(av[i], bv[i], p.Index(i), append(slices.Clip(steps), i), out)
		}
		if len(av) != len(bv) {
			last := max(len(av), len(bv)) - 1
			path := p.Index(common).String()
			if last > common {
				path += "-[" + strconv.Itoa(last) + "]"
			}
			*out = append(*out, fieldChange{path: path, steps: steps, tail: true, from: common, new: bv})
		}
		return
	}
	path := "(the whole document)"
	if p != nil {
		path = p.String()
	}
	*out = append(*out, fieldChange{path: path, steps: steps, new: b})
}

func childPath(p *field.Path, key string) *field.Path {
	if p == nil {
		return field.NewPath(key)
	}
	if identifier.MatchString(key) {
		return p.Child(key)
	}
	return p.Key(key)
}

// changedPaths are the paths at which a and b differ.
func changedPaths(a, b any) []string {
	var changes []fieldChange
	diffTrees(a, b, nil, nil, &changes)
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.path
	}
	return paths
}

// apply makes the change in doc, a copy the caller owns. It reports false when doc has no place
// for it (the parents differ).
func (c fieldChange) apply(doc any) (any, bool) {
	if len(c.steps) == 0 {
		return c.new, true
	}
	parent := doc
	for _, s := range c.steps[:len(c.steps)-1] {
		next, ok := step(parent, s)
		if m, isMap := parent.(map[string]any); !ok && isMap && !c.absent {
			// A field added under a map the old document lacks.
			next, ok = map[string]any{}, true
			m[s.(string)] = next
		}
		if !ok {
			return doc, false
		}
		parent = next
	}
	last := c.steps[len(c.steps)-1]
	if c.tail {
		list, ok := step(parent, last)
		items, isList := list.([]any)
		newItems, _ := c.new.([]any)
		if !ok || !isList || len(items) < c.from {
			return doc, false
		}
		return doc, set(parent, last, append(items[:c.from:c.from], newItems[c.from:]...))
	}
	if c.absent {
		m, ok := parent.(map[string]any)
		key, isKey := last.(string)
		if !ok || !isKey {
			return doc, false
		}
		delete(m, key)
		return doc, true
	}
	return doc, set(parent, last, c.new)
}

func step(v any, s any) (any, bool) {
	switch s := s.(type) {
	case string:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		next, ok := m[s]
		return next, ok
	case int:
		l, ok := v.([]any)
		if !ok || s >= len(l) {
			return nil, false
		}
		return l[s], true
	}
	return nil, false
}

func set(parent any, s any, value any) bool {
	switch s := s.(type) {
	case string:
		m, ok := parent.(map[string]any)
		if ok {
			m[s] = value
		}
		return ok
	case int:
		l, ok := parent.([]any)
		if ok && s < len(l) {
			l[s] = value
			return true
		}
	}
	return false
}

// deepCopy copies a JSON tree.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
