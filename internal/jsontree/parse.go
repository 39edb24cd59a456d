// Package jsontree holds an object's JSON form as a tree with sorted object members: built from a
// Go value without encoding/json (FromGo), or parsed from JSON text (Parse). The YAML writers and
// the hashes that name Jobs work from it.
package jsontree

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Value is one JSON value: an object (members sorted by key), an array, a string, or a literal (a
// number, true, false or null, as written).
type Value struct {
	Kind    Kind
	Text    string   // a string's value, or a literal as written
	Members []Member // an object's members, sorted by key
	Items   []Value  // an array's elements
}

// Kind is what a Value holds.
type Kind uint8

const (
	Object Kind = iota
	Array
	String
	Literal
)

// Member is one member of an object.
type Member struct {
	Key   string
	Value Value
}

// Member returns the value of the object member key, or nil.
func (v *Value) Member(key string) *Value {
	i, ok := slices.BinarySearchFunc(v.Members, key, func(m Member, k string) int { return strings.Compare(m.Key, k) })
	if !ok {
		return nil
	}
	return &v.Members[i].Value
}

// Set gives the object member key the value val, keeping the members sorted.
func (v *Value) Set(key string, val Value) {
	i, ok := slices.BinarySearchFunc(v.Members, key, func(m Member, k string) int { return strings.Compare(m.Key, k) })
	if ok {
		v.Members[i].Value = val
		return
	}
	v.Members = slices.Insert(v.Members, i, Member{key, val})
}

// Parse reads one JSON value.
func Parse(data []byte) (Value, error) {
	p := parser{data: data}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	if p.skipSpace(); p.pos != len(p.data) {
		return Value{}, p.errorf("unexpected text after the value")
	}
	return v, nil
}

// parser reads the compact, valid JSON encoding/json writes.
type parser struct {
	data []byte
	pos  int
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) && strings.IndexByte(" \t\r\n", p.data[p.pos]) >= 0 {
		p.pos++
	}
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *parser) value() (Value, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return Value{}, p.errorf("unexpected end")
	}
	switch p.data[p.pos] {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		s, err := p.string()
		return Value{Kind: String, Text: s}, err
	}
	start := p.pos
	for p.pos < len(p.data) && strings.IndexByte(",]} \t\r\n", p.data[p.pos]) < 0 {
		p.pos++
	}
	if p.pos == start {
		return Value{}, p.errorf("unexpected %q", p.data[p.pos])
	}
	return Value{Kind: Literal, Text: string(p.data[start:p.pos])}, nil
}

func (p *parser) object() (Value, error) {
	v := Value{Kind: Object}
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
		v.Members = append(v.Members, Member{key, val})
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
	slices.SortFunc(v.Members, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
	return v, nil
}

func (p *parser) array() (Value, error) {
	v := Value{Kind: Array}
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
		v.Items = append(v.Items, item)
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
func (p *parser) string() (string, error) {
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
func (p *parser) escapedString(start int) (string, error) {
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
func (p *parser) hex4() (rune, bool) {
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
