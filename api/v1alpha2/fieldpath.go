package v1alpha2

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// step is one step of a path: a struct field, a map key or a list index.
type step struct {
	name  string
	index int
	kind  stepKind
}

type stepKind int

const (
	fieldStep stepKind = iota
	keyStep
	indexStep
)

// fieldSteps is a field path in the MiniCluster's schema, found from the strict decoder's names.
//
// The strict decoder names a field by the JSON members down to it (spec.containers[0].volumes.data.pth:
// a map key is written as a member, and may hold dots itself), and a type error by struct fields
// only (spec.containers.volumes.path). Here those names are found again in the decoded document,
// walked together with the Go types, to give the field paths of the MiniCluster's schema:
// spec.containers[0].volumes[data].pth.
type fieldSteps []step

func (p fieldSteps) with(s step) fieldSteps { return append(slices.Clip(p), s) }

// fieldPath is p as a field path.
func (p fieldSteps) fieldPath() *field.Path {
	if len(p) == 0 {
		return field.NewPath("")
	}
	fp := field.NewPath(p[0].name)
	for _, s := range p[1:] {
		switch s.kind {
		case fieldStep:
			fp = fp.Child(s.name)
		case keyStep:
			fp = fp.Key(s.name)
		case indexStep:
			fp = fp.Index(s.index)
		}
	}
	return fp
}

// fieldNames are p's struct field names.
func (p fieldSteps) fieldNames() []string {
	var names []string
	for _, s := range p {
		if s.kind == fieldStep {
			names = append(names, s.name)
		}
	}
	return names
}

// parseDocument decodes JSON text into maps, lists and scalars (numbers as written); nil if it
// does not decode.
func parseDocument(js []byte) any {
	var doc any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &doc); err != nil {
		return nil
	}
	return normalizeNumbers(doc)
}

// normalizeNumbers turns the int64 and float64 of sigs.k8s.io/json's PreserveInts into
// json.Number, so that values compare with the text of the decoder's errors.
func normalizeNumbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			v[k] = normalizeNumbers(m)
		}
	case []any:
		for i, m := range v {
			v[i] = normalizeNumbers(m)
		}
	case int64:
		return json.Number(strconv.FormatInt(v, 10))
	case float64:
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return v
}

// structFields are the JSON members of a struct type and their types, the fields of embedded
// structs included.
func structFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, t := range structFields(ft) {
					if _, shadowed := fields[n]; !shadowed {
						fields[n] = t
					}
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	return fields
}

// walk visits v (of Go type t, at p) and everything in it, members in sorted order, until visit
// returns false.
func walk(v any, t reflect.Type, p fieldSteps, visit func(v any, t reflect.Type, p fieldSteps) bool) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(p) > 0 && !visit(v, t, p) {
		return false
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return true // decodes itself: nothing inside is a field of the schema
	}
	switch v := v.(type) {
	case map[string]any:
		var fields map[string]reflect.Type
		switch t.Kind() {
		case reflect.Struct:
			fields = structFields(t)
		case reflect.Map:
		default:
			return true
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range v {
				if !yield(k) {
					return
				}
			}
		}) {
			if fields != nil {
				ft, ok := fields[k]
				if ok && !walk(v[k], ft, p.with(step{name: k}), visit) {
					return false
				}
				continue
			}
			if !walk(v[k], t.Elem(), p.with(step{name: k, kind: keyStep}), visit) {
				return false
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return true
		}
		for i, item := range v {
			if !walk(item, t.Elem(), p.with(step{index: i, kind: indexStep}), visit) {
				return false
			}
		}
	}
	return true
}

// memberPath is the field path of a member the decoder named, and for a member that is not a
// field of its struct, the fields of that struct nearest to its name (nearestNames), as paths.
type memberPath struct {
	path       *field.Path
	didYouMean []string
}

// memberPaths are the field paths of the members the decoder names by their JSON names: every
// place in the document that name can be, since map keys may hold dots (a.b.pth is the member pth
// of the key a.b, or the member b.pth of the key a), and the decoder reports the name once.
func memberPaths(doc any, name string) []memberPath {
	var found []memberPath
	var find func(v any, t reflect.Type, rest string, p fieldSteps)
	find = func(v any, t reflect.Type, rest string, p fieldSteps) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if rest == "" {
			found = append(found, memberPath{path: p.fieldPath()})
			return
		}
		switch v := v.(type) {
		case map[string]any:
			var fields map[string]reflect.Type
			if t.Kind() == reflect.Struct {
				fields = structFields(t)
			} else if t.Kind() != reflect.Map {
				return
			}
			for k, m := range v {
				after, ok := strings.CutPrefix(rest, k)
				if !ok || after != "" && after[0] != '.' && after[0] != '[' {
					continue
				}
				after = strings.TrimPrefix(after, ".")
				switch ft, known := fields[k]; {
				case fields == nil:
					find(m, t.Elem(), after, p.with(step{name: k, kind: keyStep}))
				case known:
					find(m, ft, after, p.with(step{name: k}))
				case after == "":
					// The unknown member, and the struct's fields its name is nearest to.
					unknown := memberPath{path: p.with(step{name: k}).fieldPath()}
					for _, near := range nearestNames(k, slices.Collect(maps.Keys(fields))) {
						unknown.didYouMean = append(unknown.didYouMean, p.with(step{name: near}).fieldPath().String())
					}
					found = append(found, unknown)
				}
			}
		case []any:
			i, after, ok := cutIndex(rest)
			if ok && i < len(v) && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				find(v[i], t.Elem(), strings.TrimPrefix(after, "."), p.with(step{index: i, kind: indexStep}))
			}
		}
	}
	find(doc, reflect.TypeFor[MiniCluster](), name, nil)
	if len(found) == 0 {
		return []memberPath{{path: field.NewPath(name)}}
	}
	slices.SortFunc(found, func(a, b memberPath) int { return strings.Compare(a.path.String(), b.path.String()) })
	return slices.CompactFunc(found, func(a, b memberPath) bool { return a.path.String() == b.path.String() })
}

// cutIndex reads "[i]" at the start of s.
func cutIndex(s string) (int, string, bool) {
	inside, after, ok := strings.Cut(strings.TrimPrefix(s, "["), "]")
	if !ok || !strings.HasPrefix(s, "[") {
		return 0, "", false
	}
	i, err := strconv.Atoi(inside)
	return i, after, err == nil && i >= 0
}
