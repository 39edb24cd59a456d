package fn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// objectNode turns a typed object into a YAML node tree through its JSON form, as sigs.k8s.io/yaml
// would (mapping keys sorted, empty status dropped), but without printing and re-parsing YAML
// text: that round trip was most of the function's run time.
func objectNode(obj any) (*yaml.RNode, error) {
	v, err := objectMap(obj)
	if err != nil {
		return nil, err
	}
	return yaml.NewRNode(valueNode(v)), nil
}

// objectMap is obj's JSON form as a map (numbers kept exact), without status: generated objects
// have none, and typed structs would print an empty one.
func objectMap(obj any) (map[string]any, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	delete(v, "status")
	return v, nil
}

func valueNode(v any) *yaml.Node {
	switch t := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			n.Content = append(n.Content, stringNode(k), valueNode(t[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for _, e := range t {
			n.Content = append(n.Content, valueNode(e))
		}
		return n
	case string:
		return stringNode(t)
	case json.Number:
		tag := yaml.NodeTagInt
		if strings.ContainsAny(t.String(), ".eE") {
			tag = yaml.NodeTagFloat
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: t.String()}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: fmt.Sprint(t)}
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}
	}
	panic(fmt.Sprintf("unexpected JSON value %T", v))
}

// stringNode is a string scalar; the encoder quotes it where it would read as another type, and
// writes multi-line text as a literal block, as sigs.k8s.io/yaml does.
func stringNode(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: s}
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}
