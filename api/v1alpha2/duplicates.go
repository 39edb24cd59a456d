package v1alpha2

import (
	"fmt"
	"reflect"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DuplicateKey is a key given twice in one mapping of a MiniCluster document: YAML allows a key
// once, and the converters that read the document either refuse it (sigs.k8s.io/yaml, without
// saying where in the schema) or keep one of the values silently.
type DuplicateKey struct {
	// Path is the field of the second key, written as in every other error
	// (spec.containers[0].volumes[data].path).
	Path *field.Path
	Key  string
	// Line and FirstLine are the lines of the second and the first key in the text the node was
	// parsed from.
	Line, FirstLine int
}

// DuplicateKeys are the duplicate keys of a MiniCluster document (or of its mapping), in document
// order.
func DuplicateKeys(doc *yaml.Node) []DuplicateKey {
	var found []DuplicateKey
	// t is the Go type the node decodes into, nil where the schema does not say (an unknown field,
	// or inside a type that decodes itself).
	var visit func(n *yaml.Node, t reflect.Type, p fieldSteps)
	visit = func(n *yaml.Node, t reflect.Type, p fieldSteps) {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				visit(c, t, p)
			}
		case yaml.MappingNode:
			var fields map[string]reflect.Type
			if t != nil && t.Kind() == reflect.Struct {
				fields = structFields(t)
			}
			first := map[string]int{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yaml.ScalarNode {
					continue // not a key a MiniCluster can have; Decode refuses it
				}
				s, vt := step{name: k.Value}, fields[k.Value]
				if t != nil && t.Kind() == reflect.Map {
					s, vt = step{name: k.Value, kind: keyStep}, t.Elem()
				}
				if line, dup := first[k.Value]; dup {
					found = append(found, DuplicateKey{Path: p.with(s).fieldPath(), Key: k.Value, Line: k.Line, FirstLine: line})
				} else {
					first[k.Value] = k.Line
				}
				visit(v, vt, p.with(s))
			}
		case yaml.SequenceNode:
			var et reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				et = t.Elem()
			}
			for i, c := range n.Content {
				visit(c, et, p.with(step{index: i, kind: indexStep}))
			}
		}
		// An alias repeats a node visited where its anchor is.
	}
	visit(doc, reflect.TypeFor[MiniCluster](), nil)
	return found
}

// duplicateKeyErrors are the errors of a document's duplicate keys, without their lines: Decode
// reads a document as the orchestrator serialized it, whose lines are not the user's file.
func duplicateKeyErrors(data []byte) field.ErrorList {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil
	}
	var errs field.ErrorList
	for _, d := range DuplicateKeys(&doc) {
		errs = append(errs, &field.Error{Type: field.ErrorTypeDuplicate, Field: d.Path.String(), BadValue: field.OmitValueType{},
			Detail: fmt.Sprintf("mapping key %q is given twice; YAML allows a key once per mapping", d.Key)})
	}
	return errs
}
