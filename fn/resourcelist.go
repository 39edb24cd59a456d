package fn

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// ResourceList is a KRM function's input and output (KRM Functions Specification): the items,
// the functionConfig, and the results. Its results have the shape of kyaml's fn/framework
// results, field for field, so every orchestrator reads them the same way; the binary does not
// import fn/framework itself, because its OpenAPI validation packages alone made every start of
// the function about 1.5 ms slower (their init compiles large regular expressions).
type ResourceList struct {
	Items          []*yaml.RNode
	FunctionConfig *yaml.RNode
	Results        Results
}

// Severity of a result; an error result makes the function exit non-zero.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityInfo    Severity = "info"
)

// Result is one finding about the input.
type Result struct {
	Message     string                   `yaml:"message,omitempty" json:"message,omitempty"`
	Severity    Severity                 `yaml:"severity,omitempty" json:"severity,omitempty"`
	ResourceRef *yaml.ResourceIdentifier `yaml:"resourceRef,omitempty" json:"resourceRef,omitempty"`
	Field       *Field                   `yaml:"field,omitempty" json:"field,omitempty"`
	File        *File                    `yaml:"file,omitempty" json:"file,omitempty"`
}

// Field is the field of the resource a result is about.
type Field struct {
	Path         string `yaml:"path,omitempty" json:"path,omitempty"`
	CurrentValue any    `yaml:"currentValue,omitempty" json:"currentValue,omitempty"`
}

// File is the file (and document in it) that holds the resource a result is about.
type File struct {
	Path  string `yaml:"path,omitempty" json:"path,omitempty"`
	Index int    `yaml:"index,omitempty" json:"index,omitempty"`
}

// Results are the findings of one run.
type Results []*Result

// String is "[severity] apiVersion/kind/namespace/name field: message", as kyaml writes a result.
func (r Result) String() string {
	var b strings.Builder
	sev := r.Severity
	if sev == "" {
		sev = SeverityInfo
	}
	fmt.Fprintf(&b, "[%s]", sev)
	if ref := r.ResourceRef; ref != nil {
		var id []string
		for _, s := range []string{ref.APIVersion, ref.Kind, ref.Namespace, ref.Name} {
			if s != "" {
				id = append(id, s)
			}
		}
		if len(id) > 0 {
			b.WriteString(" " + strings.Join(id, "/"))
		}
	}
	if r.Field != nil {
		b.WriteString(" " + r.Field.Path)
	}
	b.WriteString(": " + r.Message)
	return b.String()
}

// Error joins the results' strings with blank lines.
func (rs Results) Error() string {
	msgs := make([]string, len(rs))
	for i, r := range rs {
		msgs[i] = r.String()
	}
	return strings.Join(msgs, "\n\n")
}
