package jsontree

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// FromGo is the tree of v's encoding/json form (tags, omitempty, omitzero, embedded structs,
// Marshaler and TextMarshaler types, []byte as base64), built by walking the value itself.
// encoding/json builds an encoder for every type reachable from a type the first time it sees
// it, which for a Kubernetes PodTemplateSpec is the whole core/v1 API and took about 1.5 ms of
// every start of the function; walking the value only looks at the types that are set.
// Tests compare FromGo with encoding/json on every object the generators make.
func FromGo(v any) (Value, error) {
	if v == nil {
		return Value{Kind: Literal, Text: "null"}, nil
	}
	return fromValue(reflect.ValueOf(v))
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
	null              = Value{Kind: Literal, Text: "null"}
)

func fromValue(v reflect.Value) (Value, error) {
	if !v.IsValid() {
		return null, nil
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		if v.IsNil() {
			return null, nil
		}
	}
	if m, ok := implementer(v, marshalerType); ok {
		b, err := m.Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			return Value{}, fmt.Errorf("json: error calling MarshalJSON for type %s: %w", t, err)
		}
		return Parse(b)
	}
	if m, ok := implementer(v, textMarshalerType); ok {
		b, err := m.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return Value{}, fmt.Errorf("json: error calling MarshalText for type %s: %w", t, err)
		}
		return Value{Kind: String, Text: string(b)}, nil
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		return fromValue(v.Elem())
	case reflect.Struct:
		return fromStruct(v)
	case reflect.Map:
		if v.IsNil() {
			return null, nil
		}
		if t.Key().Kind() != reflect.String {
			return Value{}, fmt.Errorf("jsontree: unsupported map key type %s", t.Key())
		}
		out := Value{Kind: Object, Members: make([]Member, 0, v.Len())}
		for it := v.MapRange(); it.Next(); {
			val, err := fromValue(it.Value())
			if err != nil {
				return Value{}, err
			}
			out.Members = append(out.Members, Member{it.Key().String(), val})
		}
		slices.SortFunc(out.Members, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
		return out, nil
	case reflect.Slice:
		if v.IsNil() {
			return null, nil
		}
		if t.Elem().Kind() == reflect.Uint8 {
			return Value{Kind: String, Text: base64.StdEncoding.EncodeToString(v.Bytes())}, nil
		}
		fallthrough
	case reflect.Array:
		out := Value{Kind: Array, Items: make([]Value, v.Len())}
		for i := range v.Len() {
			item, err := fromValue(v.Index(i))
			if err != nil {
				return Value{}, err
			}
			out.Items[i] = item
		}
		return out, nil
	case reflect.String:
		return Value{Kind: String, Text: v.String()}, nil
	case reflect.Bool:
		return Value{Kind: Literal, Text: strconv.FormatBool(v.Bool())}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Value{Kind: Literal, Text: strconv.FormatInt(v.Int(), 10)}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return Value{Kind: Literal, Text: strconv.FormatUint(v.Uint(), 10)}, nil
	case reflect.Float32, reflect.Float64:
		return fromFloat(v.Float(), t.Bits())
	}
	return Value{}, fmt.Errorf("jsontree: unsupported type %s", t)
}

// implementer returns v (or its address) as a value whose type implements iface, as
// encoding/json finds Marshalers: pointer-receiver methods count when v is addressable.
func implementer(v reflect.Value, iface reflect.Type) (reflect.Value, bool) {
	switch methodsOf(v.Type(), iface) {
	case onValue:
		return v, true
	case onPointer:
		if v.CanAddr() {
			return v.Addr(), true
		}
	}
	return reflect.Value{}, false
}

type receiver uint8

const (
	none receiver = iota
	onValue
	onPointer
)

type typeIface struct{ t, iface reflect.Type }

var receivers sync.Map // typeIface -> receiver

// methodsOf tells whether t has iface's methods, or only *t has (cached: Implements is slow).
func methodsOf(t, iface reflect.Type) receiver {
	key := typeIface{t, iface}
	if r, ok := receivers.Load(key); ok {
		return r.(receiver)
	}
	r := none
	switch {
	case t.Implements(iface):
		r = onValue
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface):
		r = onPointer
	}
	receivers.Store(key, r)
	return r
}

// fromFloat formats a float as encoding/json does (ES6 number formatting).
func fromFloat(f float64, bits int) (Value, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return Value{}, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, bits))
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	b := strconv.AppendFloat(nil, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return Value{Kind: Literal, Text: string(b)}, nil
}

// field is one JSON member of a struct type: where it is (an index path through embedded
// structs) and how its tag says to write it.
type field struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
}

var structFields sync.Map // reflect.Type -> []field

func fromStruct(v reflect.Value) (Value, error) {
	out := Value{Kind: Object}
	for _, f := range fieldsOf(v.Type()) {
		fv, ok := fieldByIndex(v, f.index)
		if !ok {
			continue // behind a nil embedded pointer
		}
		if f.omitEmpty && isEmpty(fv) || f.omitZero && isZero(fv) {
			continue
		}
		val, err := fromValue(fv)
		if err != nil {
			return Value{}, err
		}
		out.Members = append(out.Members, Member{f.name, val})
	}
	slices.SortFunc(out.Members, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

// fieldsOf lists a struct type's JSON members with encoding/json's rules: exported fields, "-"
// skipped, untagged embedded structs flattened, and of several fields with one name the
// shallowest (or the only tagged one at that depth) wins.
func fieldsOf(t reflect.Type) []field {
	if f, ok := structFields.Load(t); ok {
		return f.([]field)
	}
	type candidate struct {
		field
		tagged bool
	}
	var all []candidate
	var walk func(t reflect.Type, index []int, visited map[reflect.Type]bool)
	walk = func(t reflect.Type, index []int, visited map[reflect.Type]bool) {
		if visited[t] {
			return
		}
		visited[t] = true
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(slices.Clone(index), i)
			ft := sf.Type
			if sf.Anonymous {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && ft.Kind() == reflect.Struct {
					walk(ft, idx, visited)
					continue
				}
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			f := candidate{field: field{name: name, index: idx}, tagged: name != ""}
			if f.name == "" {
				f.name = sf.Name
			}
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "omitempty":
					f.omitEmpty = true
				case "omitzero":
					f.omitZero = true
				}
			}
			all = append(all, f)
		}
		delete(visited, t)
	}
	walk(t, nil, map[reflect.Type]bool{})
	// Dominant fields: per name, the shallowest; at equal depth a single tagged one; else none.
	var fields []field
	byName := map[string][]candidate{}
	var order []string
	for _, c := range all {
		if _, seen := byName[c.name]; !seen {
			order = append(order, c.name)
		}
		byName[c.name] = append(byName[c.name], c)
	}
	for _, name := range order {
		cs := byName[name]
		depth := slices.MinFunc(cs, func(a, b candidate) int { return len(a.index) - len(b.index) })
		var top []candidate
		for _, c := range cs {
			if len(c.index) == len(depth.index) {
				top = append(top, c)
			}
		}
		if len(top) > 1 {
			var tagged []candidate
			for _, c := range top {
				if c.tagged {
					tagged = append(tagged, c)
				}
			}
			top = tagged
		}
		if len(top) == 1 {
			fields = append(fields, top[0].field)
		}
	}
	structFields.Store(t, fields)
	return fields
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// isZero is encoding/json's omitzero test: an IsZero method when the type has one, else the
// zero value.
func isZero(v reflect.Value) bool {
	if m, ok := implementer(v, isZeroerType); ok {
		if m.Kind() == reflect.Pointer && m.IsNil() {
			return true
		}
		return m.Interface().(interface{ IsZero() bool }).IsZero()
	}
	return v.IsZero()
}

// AppendCanonical appends a canonical text of v (JSON-like, object members sorted, strings
// written as <length>"<bytes>"): equal trees give equal text, different trees different text.
// For hashing.
func (v Value) AppendCanonical(b []byte) []byte {
	switch v.Kind {
	case Object:
		b = append(b, '{')
		for i, m := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.Key)
			b = append(b, ':')
			b = m.Value.AppendCanonical(b)
		}
		return append(b, '}')
	case Array:
		b = append(b, '[')
		for i, item := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.AppendCanonical(b)
		}
		return append(b, ']')
	case String:
		return appendString(b, v.Text)
	}
	return append(b, v.Text...)
}

// appendString writes s with its length in front, so no character needs escaping.
func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
