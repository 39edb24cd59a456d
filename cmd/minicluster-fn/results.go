package main

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
)

// printResults writes one line per result: severity, file, object, field and message.
func printResults(w io.Writer, results framework.Results) {
	for _, r := range results {
		fmt.Fprintln(w, formatResult(r))
	}
}

func formatResult(r *framework.Result) string {
	var parts []string
	if r.File != nil && r.File.Path != "" {
		file := r.File.Path
		if r.File.Index > 0 {
			file = fmt.Sprintf("%s (document %d)", file, r.File.Index+1)
		}
		parts = append(parts, file)
	}
	if ref := r.ResourceRef; ref != nil && ref.Name != "" {
		id := ref.Kind + "/" + ref.Name
		if ref.Namespace != "" {
			id = ref.Kind + "/" + ref.Namespace + "/" + ref.Name
		}
		parts = append(parts, id)
	}
	if r.Field != nil && r.Field.Path != "" {
		parts = append(parts, r.Field.Path)
	}
	sev := string(r.Severity)
	if sev == "" {
		sev = string(framework.Error)
	}
	return sev + ": " + strings.Join(append(parts, r.Message), ": ")
}
