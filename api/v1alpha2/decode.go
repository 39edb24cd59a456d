package v1alpha2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
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

// sizeUnset is what spec.size holds before decoding, to tell an explicit 0 (an error: the
// operator would take it for "unset") from no size. It is a valid value too: when it is there
// after decoding, presentSize tells which it is.
const sizeUnset = math.MinInt32

// decodeJSON decodes the JSON form of a document: first whether it is a MiniCluster (apiVersion
// and kind), then strictly.
func decodeJSON(js []byte) (*MiniCluster, field.ErrorList) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &head); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath(""), "<document>", "expected a YAML mapping with apiVersion and kind")}
	}
	if head.Kind != Kind || head.APIVersion != APIVersion {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), head.APIVersion+", Kind="+head.Kind,
			"not a MiniCluster: expected apiVersion "+APIVersion+" and kind "+Kind)}
	}
	mc := &MiniCluster{}
	mc.Spec.Size = sizeUnset
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
			duplicate := strings.HasPrefix(e.Error(), "duplicate field")
			for _, p := range memberPaths(doc, fe.FieldPath()) {
				if duplicate {
					errs = append(errs, field.Duplicate(p, "field given twice"))
				} else {
					errs = append(errs, unknownFieldError(p))
				}
			}
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

// unknownFieldError is the error for a field that is not in the MiniCluster v1alpha2 schema: every
// unknown field of a document is reported through here.
func unknownFieldError(path *field.Path) *field.Error {
	return field.Forbidden(path, UnknownFieldDetail(path))
}

// presentSize tells whether spec.size is in the document (and not null).
func presentSize(js []byte) bool {
	var probe struct {
		Spec struct {
			Size *json.RawMessage `json:"size"`
		} `json:"spec"`
	}
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(js, &probe)
	return err == nil && probe.Spec.Size != nil
}

// decodeError turns the error of a decoding that failed into a field error at its path.
func decodeError(err error, js []byte) *field.Error {
	if te, ok := parseTypeError(err.Error()); ok {
		p := field.NewPath("")
		if te.path != "" {
			p = typeErrorPath(parseDocument(js), te)
		}
		return field.Invalid(p, "<"+te.value+">", "wrong type: expected "+goTypeToYAML(te.goType))
	}
	// The error of a type's own decoding (a quantity or a time that does not parse) has no path:
	// the first value that fails the same way is where it came from.
	if p, v, ok := valueErrorPath(parseDocument(js), err); ok {
		return field.Invalid(p, v, err.Error())
	}
	return field.Invalid(field.NewPath(""), "<document>", err.Error())
}

// typeError is what the strict decoder's type error says: the JSON value ("string",
// "number 1.5"), the JSON names of the struct fields down to it, and the Go type.
type typeError struct {
	value, path, goType string
}

// parseTypeError reads a type error from its message, "json: cannot unmarshal V into Go struct
// field S.PATH of type T" or "... into Go value of type T": sigs.k8s.io/json's type error type is
// internal to it.
func parseTypeError(msg string) (typeError, bool) {
	rest, ok := strings.CutPrefix(msg, "json: cannot unmarshal ")
	if !ok {
		return typeError{}, false
	}
	if value, goType, ok := strings.Cut(rest, " into Go value of type "); ok {
		return typeError{value: value, goType: goType}, true
	}
	value, target, ok := strings.Cut(rest, " into Go struct field ")
	i := strings.LastIndex(target, " of type ")
	if !ok || i < 0 {
		return typeError{}, false
	}
	_, path, _ := strings.Cut(target[:i], ".") // the struct's Go name comes first
	return typeError{value: value, path: path, goType: target[i+len(" of type "):]}, true
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
func typeErrorPath(doc any, te typeError) *field.Path {
	// The names of embedded structs (TypeMeta.apiVersion) are no JSON members.
	names := slices.DeleteFunc(strings.Split(te.path, "."), func(n string) bool { return n == "TypeMeta" || n == "ObjectMeta" })
	var found fieldSteps
	walk(doc, reflect.TypeFor[MiniCluster](), nil, func(v any, t reflect.Type, p fieldSteps) bool {
		if found != nil {
			return false
		}
		if t.String() == te.goType && slices.Equal(p.fieldNames(), names) {
			if kind := jsonKind(v); kind == te.value || strings.SplitN(kind, " ", 2)[0] == te.value {
				found = p
				return false
			}
		}
		return true
	})
	if found == nil {
		return field.NewPath(te.path)
	}
	return found.fieldPath()
}
