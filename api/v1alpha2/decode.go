package v1alpha2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/internal/jsontree"
)

// Decode reads one MiniCluster document strictly: YAML that does not parse, a document that is not
// a MiniCluster, unknown or duplicate fields and values of the wrong type are all errors with the
// field path. It does not apply defaults (see Default) so that explicit zero values stay visible.
func Decode(data []byte) (*MiniCluster, field.ErrorList) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, field.ErrorList{field.Required(field.NewPath(""), "empty input: expected a MiniCluster document")}
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "YAML does not parse: "+err.Error())}
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "expected a YAML mapping with apiVersion and kind")}
	}
	if head.Kind != Kind || head.APIVersion != APIVersion {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), head.APIVersion+", Kind="+head.Kind,
			"not a MiniCluster: expected apiVersion "+APIVersion+" and kind "+Kind)}
	}
	return decodeStrict(js)
}

var (
	unknownField   = regexp.MustCompile(`^unknown field "(.*)"$`)
	duplicateField = regexp.MustCompile(`^duplicate field "(.*)"$`)
	typeMismatch   = regexp.MustCompile(`^json: cannot unmarshal (\S+) into Go struct field \S+ of type (\S+)`)
)

func decodeStrict(js []byte) (*MiniCluster, field.ErrorList) {
	mc := &MiniCluster{}
	strictErrs, err := sigsjson.UnmarshalStrict(js, mc, sigsjson.DisallowUnknownFields)
	var errs field.ErrorList
	if err != nil {
		errs = append(errs, typeError(err, js))
	}
	for _, e := range strictErrs {
		msg := e.Error()
		switch {
		case unknownField.MatchString(msg):
			p := unknownField.FindStringSubmatch(msg)[1]
			errs = append(errs, field.Forbidden(pathOf(p), "unknown field: not in the MiniCluster v1alpha2 schema (check the spelling)"))
		case duplicateField.MatchString(msg):
			errs = append(errs, field.Duplicate(pathOf(duplicateField.FindStringSubmatch(msg)[1]), "field given twice"))
		default:
			errs = append(errs, field.Invalid(field.NewPath(""), "<document>", msg))
		}
	}
	if err != nil {
		return nil, errs
	}
	if mc.Spec.Size == 0 && explicitSize(js) {
		// Size 0 is the "unset" value of the field, so an explicit 0 has to be caught here.
		errs = append(errs, field.Invalid(field.NewPath("spec", "size"), 0, "must be at least 1"))
	}
	sortErrors(errs)
	return mc, errs
}

// explicitSize tells whether spec.size is present in the document.
func explicitSize(js []byte) bool {
	var probe struct {
		Spec struct {
			Size *json.RawMessage `json:"size"`
		} `json:"spec"`
	}
	return json.Unmarshal(js, &probe) == nil && probe.Spec.Size != nil
}

// typeError turns a JSON type mismatch into a field error naming the path. The decoder's path has
// no list indices (spec.containers.image); the document tells which element it is.
func typeError(err error, js []byte) *field.Error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return field.Invalid(indexedPath(js, ute.Field, ute.Value), "<"+ute.Value+">", fmt.Sprintf("wrong type: expected %s", goTypeToYAML(ute.Type.String())))
	}
	if m := typeMismatch.FindStringSubmatch(err.Error()); m != nil {
		return field.Invalid(field.NewPath(""), "<"+m[1]+">", "wrong type: expected "+goTypeToYAML(m[2]))
	}
	return field.Invalid(field.NewPath(""), "<document>", err.Error())
}

func goTypeToYAML(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "an integer"
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "map") || strings.HasPrefix(t, "v1alpha2.") || strings.HasPrefix(t, "v1."):
		return "a mapping"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return t
}

// indexedPath finds the first place in the document that matches the dotted path (any element of
// a list, or entry of a map, standing in between: the decoder leaves indices and keys out) and
// holds a JSON value of the kind the decoder reported ("string", "number", "object", "array",
// "bool"); the dotted path if there is none.
func indexedPath(js []byte, dotted, kind string) *field.Path {
	doc, err := jsontree.Parse(js)
	if err != nil {
		return pathOf(dotted)
	}
	kind, _, _ = strings.Cut(kind, " ") // "number 1.5"
	var find func(v *jsontree.Value, segs []string, p *field.Path) *field.Path
	find = func(v *jsontree.Value, segs []string, p *field.Path) *field.Path {
		if v.Kind == jsontree.Array {
			for i := range v.Items {
				if found := find(&v.Items[i], segs, p.Index(i)); found != nil {
					return found
				}
			}
			if len(segs) > 0 {
				return nil
			}
		}
		if len(segs) == 0 {
			if jsonKind(v) == kind {
				return p
			}
			return nil
		}
		if v.Kind != jsontree.Object {
			return nil
		}
		if next := v.Member(segs[0]); next != nil {
			return find(next, segs[1:], p.Child(segs[0]))
		}
		// A map (volumes, secrets): its keys are not in the decoder's path either.
		for i := range v.Members {
			m := &v.Members[i]
			if found := find(&m.Value, segs, p.Key(m.Key)); found != nil {
				return found
			}
		}
		return nil
	}
	segs := strings.Split(dotted, ".")
	root := doc.Member(segs[0])
	if root == nil {
		return pathOf(dotted)
	}
	if found := find(root, segs[1:], field.NewPath(segs[0])); found != nil {
		return found
	}
	return pathOf(dotted)
}

// jsonKind names a value's kind as encoding/json's type errors do.
func jsonKind(v *jsontree.Value) string {
	switch v.Kind {
	case jsontree.Object:
		return "object"
	case jsontree.Array:
		return "array"
	case jsontree.String:
		return "string"
	}
	switch v.Text {
	case "true", "false":
		return "bool"
	case "null":
		return "null"
	}
	return "number"
}

func pathOf(p string) *field.Path {
	// Paths from the JSON decoder are already dotted (spec.containers[0].image); keep them verbatim.
	return field.NewPath(p)
}
