package v1alpha2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Decode reads one MiniCluster document strictly: YAML that does not parse, a document that is not
// a MiniCluster, unknown or duplicate fields and values of the wrong type are all errors with the
// field path. It does not apply defaults (see Default) so that explicit zero values stay visible.
//
// The YAML becomes JSON with sigs.k8s.io/yaml and is decoded with sigs.k8s.io/json's strict
// decoder, as the Kubernetes API server decodes strictly. Its errors name fields by their JSON
// names only (map keys as members, type errors without list indices or map keys): the exact field
// path, spec.containers[0].volumes[data].path, is found again in the document (see fieldpath.go).
func Decode(data []byte) (*MiniCluster, field.ErrorList) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, field.ErrorList{field.Required(field.NewPath(""), "empty input: expected a MiniCluster document")}
	}
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		// Its strictness is about duplicate keys: found, they are reported at their fields. Its
		// go-yaml v2 also takes a key that overrides one of a merge (<<: *anchor) for one, which
		// YAML allows.
		if errs := duplicateKeyErrors(data); len(errs) > 0 {
			return nil, errs
		}
		if js, err = yaml.YAMLToJSON(data); err != nil {
			return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "YAML does not parse: "+err.Error())}
		}
	}
	return decodeJSON(js)
}

// decodeJSON decodes the JSON form of a document: first whether it is a MiniCluster (apiVersion
// and kind), then strictly.
func decodeJSON(js []byte) (*MiniCluster, field.ErrorList) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		// Spec.Size is set when spec.size is in the document (and not null): an explicit 0 is an
		// error, since the operator would take it for "unset".
		Spec struct {
			Size *json.RawMessage `json:"size"`
		} `json:"spec"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &head); err != nil && !specTypeError(err) {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "expected a YAML mapping with apiVersion and kind")}
	}
	if detail := OtherVersionDetail(head.APIVersion, head.Kind); detail != "" {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), head.APIVersion, detail)}
	}
	if head.Kind != Kind || head.APIVersion != APIVersion {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), head.APIVersion+", Kind="+head.Kind,
			"not a MiniCluster: expected apiVersion "+APIVersion+" and kind "+Kind)}
	}
	mc := &MiniCluster{}
	strict, err := sigsjson.UnmarshalStrict(js, mc, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, field.ErrorList{decodeError(err, js)}
	}
	var errs field.ErrorList
	if len(strict) > 0 {
		doc := parseDocument(js)
		for _, e := range strict {
			var fe sigsjson.FieldError
			if !errors.As(e, &fe) {
				errs = append(errs, field.Invalid(field.NewPath(""), "<document>", e.Error()))
				continue
			}
			// sigs.k8s.io/json's strict errors tell their kind only by their text
			// (TestStrictErrorWording pins it).
			duplicate := strings.HasPrefix(e.Error(), "duplicate field")
			for _, m := range memberPaths(doc, fe.FieldPath()) {
				if duplicate {
					errs = append(errs, field.Duplicate(m.path, "field given twice"))
				} else {
					errs = append(errs, unknownFieldError(m.path, m.didYouMean))
				}
			}
		}
	}
	if head.Spec.Size != nil && mc.Spec.Size == 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "size"), 0, "must be at least 1"))
	}
	sortErrors(errs)
	return mc, errs
}

// specTypeError tells whether err is about spec not being a mapping, which the strict decoding
// reports with its path.
func specTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te) && te.Field == "spec"
}

// unknownFieldError is the error for a field that is not in the MiniCluster v1alpha2 schema: every
// unknown field of a document is reported through here, with the paths of the known fields its
// name is nearest to.
func unknownFieldError(path *field.Path, didYouMean []string) *field.Error {
	return field.Forbidden(path, UnknownFieldDetail(path, didYouMean))
}

// decodeError turns the error of a decoding that failed into a field error at its path.
func decodeError(err error, js []byte) *field.Error {
	// sigs.k8s.io/json's type errors are encoding/json's: the JSON value ("string", "number 1.5"),
	// the JSON names of the struct fields down to it (Field) and the Go type.
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		p := field.NewPath("")
		if te.Field != "" {
			p = typeErrorPath(parseDocument(js), te)
		}
		return field.Invalid(p, "<"+te.Value+">", "wrong type: expected "+goTypeToYAML(te.Type.String()))
	}
	// The error of a type's own decoding (a quantity or a time that does not parse) has no path:
	// the first value that fails the same way is where it came from.
	if p, v, ok := valueErrorPath(parseDocument(js), err); ok {
		return field.Invalid(p, v, err.Error())
	}
	return field.Invalid(field.NewPath(""), "<document>", err.Error())
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

// jsonKind is how encoding/json names the kind of a decoded JSON value in its errors.
func jsonKind(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number " + v.String()
	case bool:
		return "bool"
	}
	return "null"
}

// scalarText is a scalar value as the user wrote it, or its kind in angle brackets.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	kind, _, _ := strings.Cut(jsonKind(v), " ")
	return fmt.Sprintf("<%s>", kind)
}

// valueErrorPath finds the first value whose type decodes itself (a quantity, a time) and fails
// with err; it returns its path and its text.
func valueErrorPath(doc any, err error) (*field.Path, string, bool) {
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	var found fieldSteps
	var text string
	walk(doc, reflect.TypeFor[MiniCluster](), nil, func(v any, t reflect.Type, p fieldSteps) bool {
		if found != nil {
			return false
		}
		if v == nil || !reflect.PointerTo(t).Implements(unmarshaler) {
			return true
		}
		raw, merr := json.Marshal(v)
		if merr != nil {
			return true
		}
		if uerr := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, reflect.New(t).Interface()); uerr != nil && uerr.Error() == err.Error() {
			found, text = p, scalarText(v)
			return false
		}
		return true
	})
	return found.fieldPath(), text, found != nil
}

// typeErrorPath finds the first value (in the order the decoder met them: members sorted, as
// sigs.k8s.io/yaml writes them) that is at te's struct fields, has te's JSON kind and goes into
// te's Go type.
func typeErrorPath(doc any, te *json.UnmarshalTypeError) *field.Path {
	// The names of embedded structs (TypeMeta.apiVersion) are no JSON members.
	names := slices.DeleteFunc(strings.Split(te.Field, "."), func(n string) bool { return n == "TypeMeta" || n == "ObjectMeta" })
	goType := te.Type.String()
	var found fieldSteps
	walk(doc, reflect.TypeFor[MiniCluster](), nil, func(v any, t reflect.Type, p fieldSteps) bool {
		if found != nil {
			return false
		}
		if t.String() == goType && slices.Equal(p.fieldNames(), names) {
			kind := jsonKind(v)
			if word, _, _ := strings.Cut(kind, " "); kind == te.Value || word == te.Value {
				found = p
				return false
			}
		}
		return true
	})
	if found == nil {
		return field.NewPath(te.Field)
	}
	return found.fieldPath()
}
