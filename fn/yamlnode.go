package fn

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// objectNode turns a typed object into a YAML node tree through its JSON form, as sigs.k8s.io/yaml
// would (mapping keys sorted, empty status dropped), but without printing and re-parsing YAML
// text: that round trip was most of the function's run time.
func objectNode(obj any) (*yaml.RNode, error) {
	v, err := objectJSON(obj)
	if err != nil {
		return nil, err
	}
	return yaml.NewRNode(valueNode(v)), nil
}

func valueNode(v jsonValue) *yaml.Node {
	switch v.kind {
	case jsonObject:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}
		for _, m := range v.members {
			n.Content = append(n.Content, stringNode(m.key), valueNode(m.value))
		}
		return n
	case jsonArray:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq}
		for _, item := range v.items {
			n.Content = append(n.Content, valueNode(item))
		}
		return n
	case jsonString:
		return stringNode(v.text)
	}
	tag := yaml.NodeTagInt
	switch {
	case v.text == "true" || v.text == "false":
		tag = yaml.NodeTagBool
	case v.text == "null":
		tag = yaml.NodeTagNull
	case strings.ContainsAny(v.text, ".eE"):
		tag = yaml.NodeTagFloat
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v.text}
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
