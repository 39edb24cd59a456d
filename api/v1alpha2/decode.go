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
		errs = append(errs, typeError(err))
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

// typeError turns a JSON type mismatch into a field error naming the path.
func typeError(err error) *field.Error {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		return field.Invalid(pathOf(ute.Field), "<"+ute.Value+">", fmt.Sprintf("wrong type: expected %s", goTypeToYAML(ute.Type.String())))
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

func pathOf(p string) *field.Path {
	// Paths from the JSON decoder are already dotted (spec.containers[0].image); keep them verbatim.
	return field.NewPath(p)
}
