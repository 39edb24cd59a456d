package jsontree

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
)

// FromGo is the tree of v's encoding/json form (tags, omitempty, omitzero, ",string", embedded
// structs, Marshaler and TextMarshaler types, []byte as base64), built by walking the value itself.
// encoding/json builds an encoder for every type reachable from a type the first time it sees
// it, which for a Kubernetes PodTemplateSpec is the whole core/v1 API and took about 1.5 ms of
// every start of the function; walking the value only looks at the types that are set.
// Tests compare FromGo with encoding/json on every object the generators make.
//
// What the walk needs to know about a type is worked out once, on first sight, into a typeInfo
// (struct members already sorted by name, which of the marshaler interfaces apply). A typeInfo
// keeps pointers to its fields' and element's typeInfos, filled when first needed, so the walk
// looks the type cache up once per call, then only the first time a field's or an element's type
// is met and for the dynamic type of an interface value.
func FromGo(v any) (Value, error) {
	if v == nil {
		return null, nil
	}
	rv := reflect.ValueOf(v)
	w := walkers.Get().(*walker)
	val, err := w.value(rv, infoOf(rv.Type()))
	clear(w.present[:cap(w.present)]) // drop the references to the walked values
	w.present = w.present[:0]
	walkers.Put(w)
	return val, err
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[isZeroer]()
	stringMapType     = reflect.TypeFor[map[string]string]()
	null              = Value{Kind: Literal, Text: "null"}
)

type isZeroer interface{ IsZero() bool }

// receiver tells whether a type has an interface's methods, or only its pointer has.
type receiver uint8

const (
	none receiver = iota
	onValue
	onPointer
)

// typeInfo is what FromGo needs to know about a type. It is built once per type (infoOf) and
// never changes after, but for the lazily filled pointers to the typeInfos of the element type and
// of the fields' types.
type typeInfo struct {
	typ  reflect.Type
	kind reflect.Kind
	// marshal and text: whether the type has the methods of json.Marshaler and
	// encoding.TextMarshaler, or only its pointer has.
	marshal, text receiver
	// zero: 1 + the receiver of IsZero() bool (for omitzero), or 0 until an omitzero field of
	// the type is first tested.
	zero atomic.Uint32
	// plain: neither marshaler applies, so the kind alone says how a value is written.
	plain bool
	// bytes: a slice written as base64 (elements of kind uint8 whose pointer is no marshaler).
	bytes bool
	// mapKey: how a map's keys become member names.
	mapKey mapKeyKind
	// fields: a struct's JSON members, sorted by name; fieldInfos[i] is the typeInfo of
	// fields[i].typ once the walk has needed it.
	fields     []field
	fieldInfos []atomic.Pointer[typeInfo]
	// elem: the typeInfo of a pointer's, slice's, array's or map's element type, once needed.
	elem atomic.Pointer[typeInfo]
}

type mapKeyKind uint8

const (
	keyUnsupported mapKeyKind = iota
	keyString
	keyText
	keyInt
	keyUint
)

var typeInfos sync.Map // reflect.Type -> *typeInfo

// infoOf returns t's typeInfo, building it on first sight.
func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti, _ := typeInfos.LoadOrStore(t, newTypeInfo(t))
	return ti.(*typeInfo)
}

func newTypeInfo(t reflect.Type) *typeInfo {
	ti := &typeInfo{typ: t, kind: t.Kind()}
	if mayHaveMethods(t) {
		ti.marshal = receiverOf(t, marshalerType)
		if ti.marshal != onValue { // else MarshalJSON always wins
			ti.text = receiverOf(t, textMarshalerType)
		}
	}
	ti.plain = ti.marshal == none && ti.text == none
	switch ti.kind {
	case reflect.Struct:
		ti.fields = typeFields(t)
		ti.fieldInfos = make([]atomic.Pointer[typeInfo], len(ti.fields))
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Uint8 {
			p := reflect.PointerTo(e)
			ti.bytes = !mayHaveMethods(p) || !p.Implements(marshalerType) && !p.Implements(textMarshalerType)
		}
	case reflect.Map:
		k := t.Key()
		switch k.Kind() {
		case reflect.String:
			ti.mapKey = keyString
		default:
			if mayHaveMethods(k) && k.Implements(textMarshalerType) {
				ti.mapKey = keyText
				break
			}
			switch k.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				ti.mapKey = keyInt
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				ti.mapKey = keyUint
			}
		}
	}
	return ti
}

// mayHaveMethods is false for types that certainly have no methods, on value or pointer:
// unnamed and predeclared types but structs (which get their embedded fields' methods) and
// interfaces; an unnamed pointer type has its element type's methods.
func mayHaveMethods(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer && t.Name() == "" {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Interface:
		return true
	}
	return t.PkgPath() != ""
}

// receiverOf tells whether t has iface's methods, or only *t has (as encoding/json finds
// Marshalers: pointer-receiver methods count when the value is addressable).
func receiverOf(t, iface reflect.Type) receiver {
	switch {
	case t.Implements(iface):
		return onValue
	case t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface && reflect.PointerTo(t).Implements(iface):
		return onPointer
	}
	return none
}

// elemInfo is the typeInfo of ti's element type.
func (ti *typeInfo) elemInfo() *typeInfo {
	if e := ti.elem.Load(); e != nil {
		return e
	}
	e := infoOf(ti.typ.Elem())
	ti.elem.Store(e)
	return e
}

// fieldInfo is the typeInfo of the type of ti.fields[i].
func (ti *typeInfo) fieldInfo(i int) *typeInfo {
	if fi := ti.fieldInfos[i].Load(); fi != nil {
		return fi
	}
	fi := infoOf(ti.fields[i].typ)
	ti.fieldInfos[i].Store(fi)
	return fi
}

// walker holds the scratch space of one FromGo call.
type walker struct {
	// present: the members of the structs being walked that are written, a segment per struct
	// (so each struct's Members is allocated at its final length).
	present []presentField
}

var walkers = sync.Pool{New: func() any { return &walker{present: make([]presentField, 0, 64)} }}

type presentField struct {
	v reflect.Value
	i int
}

func (w *walker) value(v reflect.Value, ti *typeInfo) (Value, error) {
	switch ti.kind {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return null, nil
		}
	}
	if !ti.plain {
		if val, ok, err := marshaled(v, ti); ok {
			return val, err
		}
	}
	switch ti.kind {
	case reflect.String:
		return Value{Kind: String, Text: v.String()}, nil
	case reflect.Struct:
		return w.structValue(v, ti)
	case reflect.Pointer:
		return w.value(v.Elem(), ti.elemInfo())
	case reflect.Interface:
		e := v.Elem()
		return w.value(e, infoOf(e.Type()))
	case reflect.Map:
		return w.mapValue(v, ti)
	case reflect.Slice:
		if v.IsNil() {
			return null, nil
		}
		if ti.bytes {
			return Value{Kind: String, Text: base64.StdEncoding.EncodeToString(v.Bytes())}, nil
		}
		fallthrough
	case reflect.Array:
		out := Value{Kind: Array, Items: make([]Value, v.Len())}
		ei := ti.elemInfo()
		for i := range out.Items {
			item, err := w.value(v.Index(i), ei)
			if err != nil {
				return Value{}, err
			}
			out.Items[i] = item
		}
		return out, nil
	case reflect.Bool:
		if v.Bool() {
			return Value{Kind: Literal, Text: "true"}, nil
		}
		return Value{Kind: Literal, Text: "false"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Value{Kind: Literal, Text: strconv.FormatInt(v.Int(), 10)}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return Value{Kind: Literal, Text: strconv.FormatUint(v.Uint(), 10)}, nil
	case reflect.Float32, reflect.Float64:
		return fromFloat(v.Float(), ti.typ.Bits())
	}
	return Value{}, fmt.Errorf("jsontree: unsupported type %s", ti.typ)
}

// marshaled is v's MarshalJSON or MarshalText output when ti has one that applies to v: on a
// pointer receiver only when v is addressable.
func marshaled(v reflect.Value, ti *typeInfo) (Value, bool, error) {
	if r := ti.marshal; r == onValue || r == onPointer && v.CanAddr() {
		if r == onPointer {
			v = v.Addr()
		}
		b, err := v.Interface().(json.Marshaler).MarshalJSON()
		if err != nil {
			return Value{}, true, fmt.Errorf("json: error calling MarshalJSON for type %s: %w", ti.typ, err)
		}
		val, err := Parse(b)
		return val, true, err
	}
	if r := ti.text; r == onValue || r == onPointer && v.CanAddr() {
		if r == onPointer {
			v = v.Addr()
		}
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return Value{}, true, fmt.Errorf("json: error calling MarshalText for type %s: %w", ti.typ, err)
		}
		return Value{Kind: String, Text: string(b)}, true, nil
	}
	return Value{}, false, nil
}

func (w *walker) structValue(v reflect.Value, ti *typeInfo) (Value, error) {
	start := len(w.present)
	for i := range ti.fields {
		f := &ti.fields[i]
		var fv reflect.Value
		if len(f.index) == 1 {
			fv = v.Field(f.index[0])
		} else if fv = fieldByIndex(v, f.index); !fv.IsValid() {
			continue // behind a nil embedded pointer
		}
		if f.omitEmpty && isEmpty(fv) || f.omitZero && isZero(fv, ti.fieldInfo(i)) {
			continue
		}
		w.present = append(w.present, presentField{fv, i})
	}
	n := len(w.present) - start
	if n == 0 {
		return Value{Kind: Object}, nil
	}
	members := make([]Member, n)
	for k := range members {
		p := w.present[start+k]
		var val Value
		var err error
		if ti.fields[p.i].quoted {
			val, err = w.quoted(p.v, ti.fieldInfo(p.i))
		} else {
			val, err = w.value(p.v, ti.fieldInfo(p.i))
		}
		if err != nil {
			return Value{}, err
		}
		members[k] = Member{ti.fields[p.i].name, val}
	}
	w.present = w.present[:start]
	return Value{Kind: Object, Members: members}, nil
}

// fieldByIndex follows an index path through embedded structs; the zero Value when it meets a
// nil embedded pointer.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

// quoted is the value of a field tagged ",string": a bool, number or string written inside a
// JSON string, unless a marshaler writes it.
func (w *walker) quoted(v reflect.Value, ti *typeInfo) (Value, error) {
	if ti.kind == reflect.Pointer {
		if v.IsNil() || !ti.plain {
			return w.value(v, ti)
		}
		v, ti = v.Elem(), ti.elemInfo()
	}
	if !ti.plain {
		if val, ok, err := marshaled(v, ti); ok {
			return val, err
		}
	}
	if ti.kind == reflect.String {
		b, err := json.Marshal(v.String())
		return Value{Kind: String, Text: string(b)}, err
	}
	val, err := w.value(v, ti)
	if err == nil && val.Kind == Literal {
		val.Kind = String
	}
	return val, err
}

func (w *walker) mapValue(v reflect.Value, ti *typeInfo) (Value, error) {
	if v.IsNil() {
		return null, nil
	}
	if ti.mapKey == keyUnsupported {
		return Value{}, fmt.Errorf("jsontree: unsupported map key type %s", ti.typ.Key())
	}
	out := Value{Kind: Object, Members: make([]Member, 0, v.Len())}
	if ti.typ == stringMapType {
		// Labels, annotations, ConfigMap data: no reflection per member.
		for k, s := range v.Interface().(map[string]string) {
			out.Members = append(out.Members, Member{k, Value{Kind: String, Text: s}})
		}
		slices.SortFunc(out.Members, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
		return out, nil
	}
	ei := ti.elemInfo()
	// The key, and a leaf value, are read into one reused variable each instead of a new copy
	// per member. Other values are not: map values are not addressable.
	key := reflect.New(ti.typ.Key()).Elem()
	var leaf reflect.Value
	if ei.plain && isLeaf(ei.kind) {
		leaf = reflect.New(ei.typ).Elem()
	}
	for it := v.MapRange(); it.Next(); {
		key.SetIterKey(it)
		name, err := keyName(key, ti.mapKey)
		if err != nil {
			return Value{}, fmt.Errorf("json: encoding error for type %q: %q", ti.typ.String(), err.Error())
		}
		var ev reflect.Value
		if leaf.IsValid() {
			leaf.SetIterValue(it)
			ev = leaf
		} else {
			ev = it.Value()
		}
		val, err := w.value(ev, ei)
		if err != nil {
			return Value{}, err
		}
		out.Members = append(out.Members, Member{name, val})
	}
	slices.SortFunc(out.Members, func(a, b Member) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// isLeaf: kinds whose values are written from the kind alone, with nothing inside to address.
func isLeaf(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// keyName is a map key's member name, as encoding/json resolves it.
func keyName(k reflect.Value, kind mapKeyKind) (string, error) {
	switch kind {
	case keyString:
		return k.String(), nil
	case keyText:
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		b, err := k.Interface().(encoding.TextMarshaler).MarshalText()
		return string(b), err
	case keyInt:
		return strconv.FormatInt(k.Int(), 10), nil
	}
	return strconv.FormatUint(k.Uint(), 10), nil
}

// fromFloat writes a float as JavaScript prints numbers, which is what encoding/json gives:
// positional notation from 1e-6 up to (not including) 1e21, exponent notation outside that range
// with no leading zero in the exponent (1e-7, not strconv's 1e-07). For a float32 the range is
// tested in float32, as its bounds round there.
func fromFloat(f float64, bits int) (Value, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return Value{}, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, bits))
	}
	var outside bool
	if bits == 32 {
		a := float32(math.Abs(f))
		outside = a != 0 && (a < 1e-6 || a >= 1e21)
	} else {
		a := math.Abs(f)
		outside = a != 0 && (a < 1e-6 || a >= 1e21)
	}
	if !outside {
		return Value{Kind: Literal, Text: strconv.FormatFloat(f, 'f', -1, bits)}, nil
	}
	mantissa, exponent, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, bits), "e")
	sign, digits := exponent[:1], strings.TrimLeft(exponent[1:], "0")
	return Value{Kind: Literal, Text: mantissa + "e" + sign + digits}, nil
}

// field is one JSON member of a struct type: where it is (an index path through embedded
// structs), its type, and how its tag says to write it.
type field struct {
	name      string
	index     []int
	typ       reflect.Type
	omitEmpty bool
	omitZero  bool
	quoted    bool // ",string" on a bool, number or string field (or an unnamed pointer to one)
	tagged    bool // the name is the tag's
}

// fieldsOf lists a struct type's JSON members, sorted by name (see typeFields). Cached.
func fieldsOf(t reflect.Type) []field {
	return infoOf(t).fields
}

// typeFields lists a struct type's JSON members with encoding/json's rules, sorted by name:
// exported fields, "-" skipped, untagged embedded structs flattened, and of several fields with
// one name the shallowest (or the only tagged one at that depth) wins.
func typeFields(t reflect.Type) []field {
	b := fieldsBuilder{all: make([]field, 0, t.NumField())}
	b.walk(t)
	all := b.all
	// By name, then depth, tagged first: the first of a name is the one that may win.
	slices.SortFunc(all, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := len(a.index) - len(b.index); c != 0 {
			return c
		}
		switch {
		case a.tagged == b.tagged:
			return 0
		case a.tagged:
			return -1
		}
		return 1
	})
	n := 0
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		// Of several at the least depth, the one tagged field wins; else none does.
		if j == i+1 || len(all[i+1].index) != len(all[i].index) || all[i+1].tagged != all[i].tagged {
			all[n] = all[i]
			n++
		}
		i = j
	}
	clear(all[n:])
	return all[:n:n]
}

// topIndex[i:i+1] is the index path of field i of the struct itself, shared by all types.
var topIndex = func() (a [256]int) {
	for i := range a {
		a[i] = i
	}
	return a
}()

type fieldsBuilder struct {
	all      []field
	path     []int          // the index path of the embedded struct being walked
	visiting []reflect.Type // the embedded structs being walked (against cycles)
}

func (b *fieldsBuilder) walk(t reflect.Type) {
	if slices.Contains(b.visiting, t) {
		return
	}
	b.visiting = append(b.visiting, t)
	for i := range t.NumField() {
		sf := t.Field(i)
		ft := sf.Type
		if sf.Anonymous {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if !sf.IsExported() && ft.Kind() != reflect.Struct {
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !isValidTag(name) {
			name = ""
		}
		if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
			b.path = append(b.path, i)
			b.walk(ft)
			b.path = b.path[:len(b.path)-1]
			continue
		}
		f := field{name: name, typ: sf.Type, tagged: name != ""}
		if name == "" {
			f.name = sf.Name
		}
		if len(b.path) == 0 && i < len(topIndex) {
			f.index = topIndex[i : i+1 : i+1]
		} else {
			f.index = append(slices.Clip(b.path), i)
		}
		for opts != "" {
			var o string
			o, opts, _ = strings.Cut(opts, ",")
			switch o {
			case "omitempty":
				f.omitEmpty = true
			case "omitzero":
				f.omitZero = true
			case "string":
				qt := sf.Type
				if qt.Name() == "" && qt.Kind() == reflect.Pointer {
					qt = qt.Elem()
				}
				f.quoted = isLeaf(qt.Kind())
			}
		}
		b.all = append(b.all, f)
	}
	b.visiting = b.visiting[:len(b.visiting)-1]
}

// tagPunctuation is the ASCII punctuation encoding/json accepts in a tag's name (so not the
// quotes, backslash, backquote or comma).
const tagPunctuation = "!#$%&()*+-./:;<=>?@[]^_{|}~ "

// isValidTag tells whether encoding/json uses a tag's name: a non-empty run of letters, digits
// and tagPunctuation. With any other character it falls back to the Go field name.
func isValidTag(name string) bool {
	return name != "" && !strings.ContainsFunc(name, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(tagPunctuation, r)
	})
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

// isZero is encoding/json's omitzero test: an IsZero method when the type has one (a nil pointer
// or interface is zero; a value that is not addressable is copied to call a pointer-receiver
// IsZero), else the zero value.
func isZero(v reflect.Value, ti *typeInfo) bool {
	z := ti.zero.Load()
	if z == 0 {
		z = 1
		if mayHaveMethods(ti.typ) {
			z += uint32(receiverOf(ti.typ, isZeroerType))
		}
		ti.zero.Store(z)
	}
	switch receiver(z - 1) {
	case onValue:
		switch ti.kind {
		case reflect.Interface:
			if v.IsNil() || v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil() {
				return true
			}
		case reflect.Pointer:
			if v.IsNil() {
				return true
			}
		}
		return v.Interface().(isZeroer).IsZero()
	case onPointer:
		if !v.CanAddr() {
			c := reflect.New(v.Type()).Elem()
			c.Set(v)
			v = c
		}
		return v.Addr().Interface().(isZeroer).IsZero()
	}
	return v.IsZero()
}

// WriteCanonical writes a canonical text of v to w, for hashing: JSON-like, object members sorted,
// strings written as <length>"<bytes>" so that nothing needs escaping; equal trees give equal text
// and different trees different text. It goes through buf, a scratch buffer of any
// capacity (the text is written in pieces of at most cap(buf) bytes, so a large tree needs no
// buffer of its size). It returns buf, for reuse, and the first error of w.
func (v Value) WriteCanonical(w io.Writer, buf []byte) ([]byte, error) {
	if cap(buf) < 64 {
		buf = make([]byte, 0, 4096)
	}
	cw := canonicalWriter{w: w, buf: buf[:0]}
	cw.value(&v)
	cw.flush()
	return cw.buf[:0], cw.err
}

type canonicalWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (c *canonicalWriter) flush() {
	if len(c.buf) > 0 && c.err == nil {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
}

// room flushes unless n more bytes fit in the buffer.
func (c *canonicalWriter) room(n int) {
	if len(c.buf)+n > cap(c.buf) {
		c.flush()
	}
}

func (c *canonicalWriter) byte(b byte) {
	c.room(1)
	c.buf = append(c.buf, b)
}

// text writes s, in pieces when it does not fit.
func (c *canonicalWriter) text(s string) {
	for len(s) > 0 {
		if len(c.buf) == cap(c.buf) {
			c.flush()
		}
		n := copy(c.buf[len(c.buf):cap(c.buf)], s)
		c.buf = c.buf[:len(c.buf)+n]
		s = s[n:]
	}
}

func (c *canonicalWriter) string(s string) {
	c.room(24)
	c.buf = strconv.AppendInt(c.buf, int64(len(s)), 10)
	c.buf = append(c.buf, '"')
	c.text(s)
	c.byte('"')
}

func (c *canonicalWriter) value(v *Value) {
	switch v.Kind {
	case Object:
		c.byte('{')
		for i := range v.Members {
			if i > 0 {
				c.byte(',')
			}
			c.string(v.Members[i].Key)
			c.byte(':')
			c.value(&v.Members[i].Value)
		}
		c.byte('}')
	case Array:
		c.byte('[')
		for i := range v.Items {
			if i > 0 {
				c.byte(',')
			}
			c.value(&v.Items[i])
		}
		c.byte(']')
	case String:
		c.string(v.Text)
	default:
		c.text(v.Text)
	}
}
