package v1alpha2

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
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
	return decodeJSON(js)
}

// sizeUnset is what spec.size holds before decoding, to tell an explicit 0 (an error: the
// operator would take it for "unset") from no size. It is a valid value too: when it is there
// after decoding, presentSize tells which it is.
const sizeUnset = math.MinInt32

// decodeJSON decodes the JSON form of a document: first whether it is a MiniCluster (apiVersion
// and kind), then strictly.
//
// jsontree.Unmarshal decodes as sigs.k8s.io/json's UnmarshalStrict would, but builds type
// information only for the fields the document has (sigs.k8s.io/json, like encoding/json, builds
// it for every type reachable from MiniCluster on its first call: most of core/v1), and its
// errors carry the exact path, list indices and map keys included.
func decodeJSON(js []byte) (*MiniCluster, field.ErrorList) {
	mc := &MiniCluster{}
	mc.Spec.Size = sizeUnset
	strict, err := jsontree.Unmarshal(js, mc)
	if err != nil || rootUnknown(strict) {
		// The document is no clean MiniCluster; whether it is one at all decides which errors
		// there are, as encoding/json reads apiVersion and kind (case-insensitively).
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(js, &head); err != nil {
			return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "expected a YAML mapping with apiVersion and kind")}
		}
		if errs := checkHead(head.APIVersion, head.Kind); errs != nil {
			return nil, errs
		}
	} else if errs := checkHead(mc.APIVersion, mc.Kind); errs != nil {
		// The members of the root are MiniCluster's (or the root is null): of them only
		// apiVersion and kind are what encoding/json would read as them.
		return nil, errs
	}
	if err != nil {
		return nil, field.ErrorList{decodeError(err)}
	}
	var errs field.ErrorList
	for _, e := range strict {
		if e.Duplicate {
			errs = append(errs, field.Duplicate(fieldPath(e.Path), "field given twice"))
		} else {
			p := fieldPath(e.Path)
			errs = append(errs, field.Forbidden(p, UnknownFieldDetail(p)))
		}
	}
	switch {
	case mc.Spec.Size == 0:
		// Size 0 is the "unset" value of the field, so an explicit 0 has to be caught here.
		errs = append(errs, field.Invalid(field.NewPath("spec", "size"), 0, "must be at least 1"))
	case mc.Spec.Size == sizeUnset && !presentSize(js):
		mc.Spec.Size = 0
	}
	sortErrors(errs)
	return mc, errs
}

// checkHead is the error for a document of another apiVersion or kind, or nil.
func checkHead(apiVersion, kind string) field.ErrorList {
	if kind != Kind || apiVersion != APIVersion {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), apiVersion+", Kind="+kind,
			"not a MiniCluster: expected apiVersion "+APIVersion+" and kind "+Kind)}
	}
	return nil
}

// rootUnknown tells whether a member of the document's root is not a MiniCluster field (or may
// be: the strict errors are cut at jsontree.MaxStrictErrors).
func rootUnknown(strict []*jsontree.StrictError) bool {
	if len(strict) >= jsontree.MaxStrictErrors {
		return true
	}
	for _, e := range strict {
		if len(e.Path) == 1 && !e.Duplicate {
			return true
		}
	}
	return false
}

// presentSize tells whether spec.size is in the document (and not null).
func presentSize(js []byte) bool {
	var probe struct {
		Spec struct {
			Size *json.RawMessage `json:"size"`
		} `json:"spec"`
	}
	_, err := jsontree.Unmarshal(js, &probe)
	return err == nil && probe.Spec.Size != nil
}

// decodeError turns the error of a decoding that failed into a field error at its path.
func decodeError(err error) *field.Error {
	switch err := err.(type) {
	case *jsontree.TypeError:
		return field.Invalid(fieldPath(err.Path), "<"+err.Value+">", "wrong type: expected "+goTypeToYAML(err.Type.String()))
	case *jsontree.ValueError:
		// The error of a type's own decoding: a quantity or a time that does not parse.
		bad := "<" + err.Kind + ">"
		switch err.Kind {
		case "string", "number", "bool":
			bad = err.Text
		}
		return field.Invalid(fieldPath(err.Path), bad, err.Err.Error())
	}
	return field.Invalid(field.NewPath(""), "<document>", err.Error())
}

// fieldPath is a decoder path as a field path: spec.containers[1].volumes[data].path.
func fieldPath(p jsontree.Path) *field.Path {
	var fp *field.Path
	for _, s := range p {
		if fp == nil && s.Kind != jsontree.FieldStep {
			fp = field.NewPath("")
		}
		switch s.Kind {
		case jsontree.FieldStep:
			if fp == nil {
				fp = field.NewPath(s.Name)
			} else {
				fp = fp.Child(s.Name)
			}
		case jsontree.KeyStep:
			fp = fp.Key(s.Name)
		case jsontree.IndexStep:
			fp = fp.Index(s.Index)
		}
	}
	if fp == nil {
		return field.NewPath("")
	}
	return fp
}

// goTypeToYAML names what a Go type holds in YAML words.
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
