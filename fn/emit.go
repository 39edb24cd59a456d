package fn

import (
	"bufio"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/minicluster-fn/minicluster-fn/internal/jsontree"
)

// emitObject writes obj as block YAML, keys sorted (the layout sigs.k8s.io/yaml gives), every line
// indented by indent spaces, the first line prefixed by first ("- " for a list item) instead.
// Writing YAML text directly is several times faster than building and encoding a node tree,
// which matters for ResourceLists of a thousand MiniClusters; emit_test.go checks that the text
// decodes to exactly the object's JSON.
func emitObject(w *bufio.Writer, obj any, annotations map[string]string, indent int, first string) error {
	v, err := objectTree(obj)
	if err != nil {
		return err
	}
	setAnnotations(&v, annotations)
	e := emitter{w: w}
	e.mapping(v.Members, indent, first)
	return nil
}

// objectTree is obj's JSON form without status: generated objects have none, and typed structs
// would print an empty one.
func objectTree(obj any) (jsontree.Value, error) {
	v, err := jsontree.FromGo(obj)
	if err != nil {
		return v, err
	}
	if v.Kind != jsontree.Object {
		return v, fmt.Errorf("%T does not encode as a JSON object", obj)
	}
	v.Members = slices.DeleteFunc(v.Members, func(m jsontree.Member) bool { return m.Key == "status" })
	return v, nil
}

// setAnnotations adds annotations to an object's metadata.
func setAnnotations(v *jsontree.Value, annotations map[string]string) {
	if len(annotations) == 0 {
		return
	}
	meta := v.Member("metadata")
	if meta == nil {
		v.Set("metadata", jsontree.Value{Kind: jsontree.Object})
		meta = v.Member("metadata")
	}
	a := meta.Member("annotations")
	if a == nil {
		meta.Set("annotations", jsontree.Value{Kind: jsontree.Object})
		a = meta.Member("annotations")
	}
	for k, val := range annotations {
		a.Set(k, jsontree.Value{Kind: jsontree.String, Text: val})
	}
}

type emitter struct{ w *bufio.Writer }

func (e emitter) pad(n int) {
	for range n {
		e.w.WriteByte(' ')
	}
}

// mapping writes the members (sorted) at indent; the first line starts with first (already
// indented by the caller when it is a list item marker).
func (e emitter) mapping(members []jsontree.Member, indent int, first string) {
	for i, m := range members {
		if i == 0 && first != "" {
			e.pad(indent - len(first))
			e.w.WriteString(first)
		} else {
			e.pad(indent)
		}
		e.w.WriteString(scalarString(m.Key))
		e.w.WriteByte(':')
		e.value(m.Value, indent)
	}
}

// value writes what follows "key:" (or "-") for v, whose parent is at indent.
func (e emitter) value(v jsontree.Value, indent int) {
	switch v.Kind {
	case jsontree.Object:
		if len(v.Members) == 0 {
			e.w.WriteString(" {}\n")
			return
		}
		e.w.WriteByte('\n')
		e.mapping(v.Members, indent+2, "")
	case jsontree.Array:
		if len(v.Items) == 0 {
			e.w.WriteString(" []\n")
			return
		}
		e.w.WriteByte('\n')
		e.sequence(v.Items, indent)
	case jsontree.String:
		if literalOK(v.Text) {
			e.literal(v.Text, indent+2)
			return
		}
		e.w.WriteByte(' ')
		e.w.WriteString(scalarString(v.Text))
		e.w.WriteByte('\n')
	case jsontree.Literal:
		// Numbers, true, false and null read the same in YAML.
		e.w.WriteByte(' ')
		e.w.WriteString(v.Text)
		e.w.WriteByte('\n')
	}
}

// sequence writes list items at the parent's indent ("compact" style: `key:\n- item`).
func (e emitter) sequence(items []jsontree.Value, indent int) {
	for _, item := range items {
		switch {
		case item.Kind == jsontree.Object && len(item.Members) > 0:
			e.mapping(item.Members, indent+2, "- ")
		case item.Kind == jsontree.Object:
			e.pad(indent)
			e.w.WriteString("- {}\n")
		case item.Kind == jsontree.Array:
			e.pad(indent)
			e.w.WriteString("-")
			e.value(item, indent+2)
		default:
			e.pad(indent)
			e.w.WriteString("-")
			e.value(item, indent)
		}
	}
}

// literal writes a multi-line string as a literal block scalar.
func (e emitter) literal(s string, indent int) {
	trailing := len(s) - len(strings.TrimRight(s, "\n"))
	switch {
	case trailing == 0:
		e.w.WriteString(" |-\n")
	case trailing == 1:
		e.w.WriteString(" |\n")
	default:
		e.w.WriteString(" |+\n")
	}
	body := strings.TrimSuffix(s, "\n")
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" {
			e.pad(indent)
			e.w.WriteString(line)
		}
		e.w.WriteByte('\n')
	}
}

// literalOK: multi-line text that a literal block keeps exactly: printable, no carriage returns,
// and a first line that does not start with a space (which would need an indentation indicator).
func literalOK(s string) bool {
	if !strings.Contains(s, "\n") || strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\n") {
		return false
	}
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || r == 0x7f || r == '\uFEFF' || (r >= 0x80 && r < 0xA0) || r == 0x2028 || r == 0x2029 {
			return false
		}
	}
	return true
}

// scalarString writes a string plainly when no YAML reader can take it for anything else, and
// double-quoted otherwise (Go's escapes are a subset of YAML's).
func scalarString(s string) string {
	if plain(s) {
		return s
	}
	return strconv.Quote(s)
}

// plain: a string that starts with a letter, "_", "/", "." or "--" (or is a quantity such as
// 64Mi), has only characters that mean nothing to YAML without a following space (there are no
// spaces), does not end in ":" and is no word or number YAML 1.1 or 1.2 would convert.
func plain(s string) bool {
	if s == "" || s[len(s)-1] == ':' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_./=+@:-", c) >= 0) {
			return false
		}
	}
	switch c := s[0]; {
	case c >= '0' && c <= '9':
		return quantity(s)
	case c == '-':
		return strings.HasPrefix(s, "--")
	case c == '.':
		return len(s) == 1 || !(s[1] >= '0' && s[1] <= '9') && !strings.EqualFold(s, ".inf") && !strings.EqualFold(s, ".nan")
	case c == '=' || c == '+' || c == '@' || c == ':':
		return false
	}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}

// quantity: digits, then letters, then optional digits (64Mi, 10m), but not 1e3 or 0x1F.
func quantity(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	j := i
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
		j++
	}
	k := j
	for k < len(s) && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if j == i || k != len(s) {
		return false
	}
	if j-i == 1 && (s[i] == 'e' || s[i] == 'E') {
		return false // 1e3
	}
	return !(s[0] == '0' && i == 1 && strings.IndexByte("xXoObB", s[1]) >= 0)
}
