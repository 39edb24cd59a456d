package fn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// jsonValue is one value of an object's JSON form: an object (members sorted by key), an array, a
// string, or a literal (a number, true, false or null, as written). Both YAML writers work from
// it. It is parsed by hand from encoding/json's output because decoding into map[string]any with
// reflection was the largest cost of writing a thousand MiniClusters' objects.
type jsonValue struct {
	kind    jsonKind
	text    string       // a string's value, or a literal as written
	members []jsonMember // an object's members, sorted by key
	items   []jsonValue  // an array's elements
}

type jsonKind uint8

const (
	jsonObject jsonKind = iota
	jsonArray
	jsonString
	jsonLiteral
)

type jsonMember struct {
	key   string
	value jsonValue
}

// objectJSON is obj's JSON form without status: generated objects have none, and typed structs
// would print an empty one.
func objectJSON(obj any) (jsonValue, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Scripts are full of <, > and &; unescaped they need no decoding below.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return jsonValue{}, err
	}
	p := jsonParser{data: buf.Bytes()}
	v, err := p.value()
	if err != nil {
		return jsonValue{}, err
	}
	if v.kind != jsonObject {
		return jsonValue{}, fmt.Errorf("%T does not encode as a JSON object", obj)
	}
	v.members = slices.DeleteFunc(v.members, func(m jsonMember) bool { return m.key == "status" })
	return v, nil
}

// member returns the value of the object member key, or nil.
func (v *jsonValue) member(key string) *jsonValue {
	i, ok := slices.BinarySearchFunc(v.members, key, func(m jsonMember, k string) int { return strings.Compare(m.key, k) })
	if !ok {
		return nil
	}
	return &v.members[i].value
}

// set gives the object member key the value val, keeping the members sorted.
func (v *jsonValue) set(key string, val jsonValue) {
	i, ok := slices.BinarySearchFunc(v.members, key, func(m jsonMember, k string) int { return strings.Compare(m.key, k) })
	if ok {
		v.members[i].value = val
		return
	}
	v.members = slices.Insert(v.members, i, jsonMember{key, val})
}

// setAnnotations adds annotations to an object's metadata.
func (v *jsonValue) setAnnotations(annotations map[string]string) {
	if len(annotations) == 0 {
		return
	}
	meta := v.member("metadata")
	if meta == nil {
		v.set("metadata", jsonValue{kind: jsonObject})
		meta = v.member("metadata")
	}
	a := meta.member("annotations")
	if a == nil {
		meta.set("annotations", jsonValue{kind: jsonObject})
		a = meta.member("annotations")
	}
	for k, val := range annotations {
		a.set(k, jsonValue{kind: jsonString, text: val})
	}
}

// jsonParser reads the compact, valid JSON encoding/json writes.
type jsonParser struct {
	data []byte
	pos  int
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) && strings.IndexByte(" \t\r\n", p.data[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonParser) value() (jsonValue, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return jsonValue{}, p.errorf("unexpected end")
	}
	switch p.data[p.pos] {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		s, err := p.string()
		return jsonValue{kind: jsonString, text: s}, err
	}
	start := p.pos
	for p.pos < len(p.data) && strings.IndexByte(",]} \t\r\n", p.data[p.pos]) < 0 {
		p.pos++
	}
	if p.pos == start {
		return jsonValue{}, p.errorf("unexpected %q", p.data[p.pos])
	}
	return jsonValue{kind: jsonLiteral, text: string(p.data[start:p.pos])}, nil
}

func (p *jsonParser) object() (jsonValue, error) {
	v := jsonValue{kind: jsonObject}
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return v, p.errorf("expected a member name")
		}
		key, err := p.string()
		if err != nil {
			return v, err
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return v, p.errorf("expected ':'")
		}
		p.pos++
		val, err := p.value()
		if err != nil {
			return v, err
		}
		v.members = append(v.members, jsonMember{key, val})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return v, p.errorf("unexpected end in an object")
		}
		p.pos++
		if p.data[p.pos-1] == '}' {
			break
		}
		if p.data[p.pos-1] != ',' {
			return v, p.errorf("expected ',' or '}'")
		}
	}
	// encoding/json writes struct fields in declaration order; YAML output sorts them.
	slices.SortFunc(v.members, func(a, b jsonMember) int { return strings.Compare(a.key, b.key) })
	return v, nil
}

func (p *jsonParser) array() (jsonValue, error) {
	v := jsonValue{kind: jsonArray}
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		item, err := p.value()
		if err != nil {
			return v, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return v, p.errorf("unexpected end in an array")
		}
		p.pos++
		if p.data[p.pos-1] == ']' {
			return v, nil
		}
		if p.data[p.pos-1] != ',' {
			return v, p.errorf("expected ',' or ']'")
		}
	}
}

// string reads a quoted string.
func (p *jsonParser) string() (string, error) {
	p.pos++ // "
	start := p.pos
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '"':
			p.pos++
			return string(p.data[start : p.pos-1]), nil
		case '\\':
			return p.escapedString(start)
		}
		p.pos++
	}
	return "", p.errorf("unterminated string")
}

// escapedString finishes a string that has escapes, from the escape at p.pos.
func (p *jsonParser) escapedString(start int) (string, error) {
	buf := append(make([]byte, 0, 2*(p.pos-start)+16), p.data[start:p.pos]...)
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c != '\\':
			buf = append(buf, c)
			p.pos++
			continue
		}
		if p.pos+1 >= len(p.data) {
			break
		}
		esc := p.data[p.pos+1]
		p.pos += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := unicode.ReplacementChar
				if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					if low, ok := p.hex4(); ok && utf16.DecodeRune(r, low) != unicode.ReplacementChar {
						r2 = utf16.DecodeRune(r, low)
					} else {
						p.pos = save
					}
				}
				r = r2
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.errorf("bad escape \\%c", esc)
		}
	}
	return "", p.errorf("unterminated string")
}

// hex4 reads the four hex digits of a \u escape.
func (p *jsonParser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	p.pos += 4
	return rune(n), true
}
