package jsontree

// Unmarshal decodes JSON text into Go values with the rules of sigs.k8s.io/json's UnmarshalStrict
// (encoding/json's rules, case-sensitive names, integers kept as int64 in interface values,
// unknown and duplicate fields reported). It exists because those decoders build their field
// tables for every type reachable from the target type on first use, which for a MiniCluster
// (most of core/v1 through ObjectMeta and the pod types) was most of the cost of a cold Decode.
// This one is a recursive descent over the text that looks only at the types the text reaches.
//
// The text is checked with json.Valid first, so the descent can trust it: no error paths for
// malformed input, and (as with encoding/json) invalid text leaves the target untouched.

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// MaxStrictErrors is how many strict errors Unmarshal returns at most (as sigs.k8s.io/json).
const MaxStrictErrors = 100

// Unmarshal decodes the JSON text data into the value ptr points to as sigs.k8s.io/json's
// UnmarshalStrict(data, ptr, DisallowUnknownFields, DisallowDuplicateFields) does, with the same
// errors, but every error names its exact place (Path: list indices and map keys included).
//
// As there: object members are decoded in the order of the text, a member given twice over the
// earlier one. A value of the wrong JSON kind, or a number the Go type cannot hold, is skipped;
// the first such error (a *TypeError, or a *ValueError for bad base64 in a []byte) is returned
// once the rest is decoded. An error of an UnmarshalJSON or UnmarshalText method stops decoding
// (a *ValueError, or a *TypeError when the method returned a *json.UnmarshalTypeError). Members a
// struct has no field for (their values are skipped unread), and struct fields and map keys given
// twice in one object, are strict errors: returned in the order of the text, each once, at most
// MaxStrictErrors, and only when there is no other error. Text that is not JSON is a
// *SyntaxError and changes nothing; a ptr that is no pointer is a *json.InvalidUnmarshalError.
//
// Go types the MiniCluster type graph does not need and that encoding/json decodes with rules of
// their own (arrays, maps whose keys are neither strings nor TextUnmarshalers, json.Number, fields
// tagged ",string", complex numbers, channels, functions) are not decoded: a value for one is an
// *UnsupportedTypeError, which stops decoding.
func Unmarshal(data []byte, ptr any) (strict []*StrictError, err error) {
	rv := reflect.ValueOf(ptr)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, &json.InvalidUnmarshalError{Type: reflect.TypeOf(ptr)}
	}
	if !json.Valid(data) {
		return nil, &SyntaxError{}
	}
	d := decoder{data: data}
	if err := d.value(rv.Elem()); err != nil {
		return nil, err
	}
	if d.saved != nil {
		return nil, d.saved
	}
	return d.strict, nil
}

// Path is where something is in a decoded value, from the root.
type Path []Step

// A Step is one step of a Path.
type Step struct {
	Kind  StepKind
	Name  string // a struct field's JSON name (or an unknown member's key), or a map key
	Index int    // a list index
}

// StepKind is what a Step goes into.
type StepKind uint8

const (
	FieldStep StepKind = iota // a struct field (Name)
	KeyStep                   // a map entry, or a member of an object held in an interface value (Name)
	IndexStep                 // a list element (Index)
)

// String writes p as Kubernetes field paths are written: spec.containers[1].volumes[data].path.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch s.Kind {
		case FieldStep:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case KeyStep:
			b.WriteString("[" + s.Name + "]")
		case IndexStep:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		}
	}
	return b.String()
}

// StrictError is a member a struct has no field for or, when Duplicate, a struct field or map key
// given twice in one object (the later value is decoded over the earlier).
type StrictError struct {
	Path      Path
	Duplicate bool
}

func (e *StrictError) Error() string {
	if e.Duplicate {
		return "duplicate field " + strconv.Quote(e.Path.String())
	}
	return "unknown field " + strconv.Quote(e.Path.String())
}

// TypeError is a JSON value the Go type at Path cannot hold: what encoding/json reports as an
// UnmarshalTypeError (whose Value and Type these are).
type TypeError struct {
	Path  Path
	Value string       // "string", "number", "number 1.5", "bool", "object", "array"
	Type  reflect.Type // the Go type
}

func (e *TypeError) Error() string {
	where := "Go value"
	if len(e.Path) > 0 {
		where = e.Path.String()
	}
	return "json: cannot unmarshal " + e.Value + " into " + where + " of type " + e.Type.String()
}

// ValueError is a JSON value of the right kind that did not decode: an UnmarshalJSON or
// UnmarshalText method's error (a quantity or a time that does not parse), or bad base64.
type ValueError struct {
	Path Path
	Kind string // the JSON value's kind: "string", "number", "bool", "object", "array" or "null"
	Text string // a string's value, or a number or bool as written ("" for the other kinds)
	Err  error
}

func (e *ValueError) Error() string {
	if len(e.Path) == 0 {
		return e.Err.Error()
	}
	return e.Path.String() + ": " + e.Err.Error()
}

func (e *ValueError) Unwrap() error { return e.Err }

// SyntaxError is text that is not valid JSON.
type SyntaxError struct{}

func (e *SyntaxError) Error() string { return "jsontree: invalid JSON" }

// UnsupportedTypeError is a value for a Go type Unmarshal does not decode (see Unmarshal).
type UnsupportedTypeError struct {
	Path   Path
	Type   reflect.Type
	Reason string
}

func (e *UnsupportedTypeError) Error() string {
	return "jsontree: cannot decode " + e.Path.String() + " into " + e.Type.String() + ": " + e.Reason
}

// decoder is the state of one Unmarshal: the text, where it is in it and in the target value,
// and the errors so far.
type decoder struct {
	data   []byte
	pos    int
	path   Path
	saved  error // the first error decoding went on past (a *TypeError, or bad base64)
	strict []*StrictError
	given  []bool // for each struct object being decoded, which of its fields were given (a stack)
}

// decType is what decoding needs to know about a Go type, worked out the first time a value of
// it is decoded (and only then: that is the point of this decoder).
type decType struct {
	viaJSON     bool   // *T has UnmarshalJSON: it gets the value's text
	viaText     bool   // *T has UnmarshalText: it gets a JSON string's value
	unsupported string // why values of the type are not decoded, or ""

	fieldsOnce sync.Once
	fields     []decField // a struct's members, sorted by JSON name
}

// decField is a struct member.
type decField struct {
	name  string
	index []int // as reflect's FieldByIndex; through embedded structs
	// Whether the field is tagged ",string" (unsupported): 0 not known yet, 1 no, 2 yes. Looked up
	// when a value for the field is first decoded, not with the table: most fields of the
	// Kubernetes types never are, and reading every tag of a struct costs microseconds cold.
	tagged atomic.Uint32
}

// decTypes caches a *decType per reflect.Type. Decoding runs in parallel (fn decodes
// MiniClusters concurrently), hence a sync.Map; losing a race to store one only wastes it.
var decTypes sync.Map

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumberType      = reflect.TypeFor[json.Number]()
	float64Type         = reflect.TypeFor[float64]()
)

func decTypeOf(t reflect.Type) *decType {
	if dt, ok := decTypes.Load(t); ok {
		return dt.(*decType)
	}
	pt := reflect.PointerTo(t)
	dt := &decType{viaJSON: pt.Implements(jsonUnmarshalerType), viaText: pt.Implements(textUnmarshalerType)}
	if !dt.viaJSON {
		dt.unsupported = unsupported(t)
	}
	got, _ := decTypes.LoadOrStore(t, dt)
	return got.(*decType)
}

// unsupported tells why Unmarshal does not decode values of t, or "".
func unsupported(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Array, reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return t.Kind().String() + " values are not supported"
	case reflect.Map:
		if k := t.Key(); k.Kind() != reflect.String && !reflect.PointerTo(k).Implements(textUnmarshalerType) {
			return "map keys of type " + k.String() + " are not supported"
		}
	case reflect.String:
		if t == jsonNumberType {
			return "json.Number is not supported"
		}
	}
	return ""
}

// structFields is the member table of the struct type t (dt's type), built on first use from
// fieldsOf's list (which is sorted by name already; sorted here only if that changes).
func (dt *decType) structFields(t reflect.Type) []decField {
	dt.fieldsOnce.Do(func() {
		fields := fieldsOf(t)
		byName := func(a, b field) int { return strings.Compare(a.name, b.name) }
		if !slices.IsSortedFunc(fields, byName) {
			fields = slices.SortedFunc(slices.Values(fields), byName)
		}
		dt.fields = make([]decField, len(fields))
		for i, f := range fields {
			dt.fields[i].name, dt.fields[i].index = f.name, f.index
		}
	})
	return dt.fields
}

// lookup finds the member named key in fields (sorted by name): its number, or -1.
func lookup(fields []decField, key string) int {
	n := sort.Search(len(fields), func(i int) bool { return fields[i].name >= key })
	if n < len(fields) && fields[n].name == key {
		return n
	}
	return -1
}

// quoted tells whether f, a member of the struct type t, is tagged ",string".
func (f *decField) quoted(t reflect.Type) bool {
	state := f.tagged.Load()
	if state == 0 {
		state = 1
		_, opts, _ := strings.Cut(t.FieldByIndex(f.index).Tag.Get("json"), ",")
		for opts != "" {
			var opt string
			if opt, opts, _ = strings.Cut(opts, ","); opt == "string" {
				state = 2
			}
		}
		f.tagged.Store(state)
	}
	return state == 2
}

// value decodes the JSON value at d.pos into v (addressable, or a pointer that is not nil) and
// moves past it. The error it returns stops decoding; the errors decoding goes on past are saved
// (saveError).
func (d *decoder) value(v reflect.Value) error {
	d.skipSpace()
	c := d.data[d.pos]
	// null makes a pointer nil; any other value goes into what it points to, allocated if need be.
	var via reflect.Type // the last pointer type gone through
	for v.Kind() == reflect.Pointer {
		via = v.Type()
		if c == 'n' {
			d.pos += len("null")
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.Interface {
		return d.intoInterface(v, c)
	}
	dt := decTypeOf(v.Type())
	if dt.viaJSON {
		// Called for null too, as encoding/json does (metav1.Time makes null the zero time).
		start := d.pos
		d.skip()
		raw := d.data[start:d.pos]
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return d.methodError(err, raw)
		}
		return nil
	}
	if dt.unsupported != "" {
		return &UnsupportedTypeError{Path: d.here(), Type: v.Type(), Reason: dt.unsupported}
	}
	switch k := v.Kind(); c {
	case '{':
		switch {
		case dt.viaText: // a TextUnmarshaler takes strings only: a type error, below
		case k == reflect.Struct:
			return d.intoStruct(v, dt)
		case k == reflect.Map:
			return d.intoMap(v)
		}
	case '[':
		if !dt.viaText && k == reflect.Slice {
			return d.intoSlice(v)
		}
	case '"':
		return d.intoFromString(v, dt)
	case 'n':
		// Only nil-able kinds take null; for the others it means "not set".
		d.pos += len("null")
		if k == reflect.Map || k == reflect.Slice {
			v.SetZero()
		}
		return nil
	case 't', 'f':
		if !dt.viaText && k == reflect.Bool {
			v.SetBool(c == 't')
			d.literal()
			return nil
		}
	default:
		if !dt.viaText {
			return d.intoFromNumber(v)
		}
	}
	if dt.viaText && via != nil {
		// encoding/json names the type it found the UnmarshalText method on: the pointer's.
		return d.mismatch(via)
	}
	return d.mismatch(v.Type())
}

// intoInterface decodes into an interface value: null makes it nil; a pointer it holds is decoded
// into; else an empty interface gets the value's generic form (map[string]any, []any, string,
// bool, and a number as an int64 when it is an integer that fits, else as a float64) and any
// other interface is a type error.
func (d *decoder) intoInterface(v reflect.Value, c byte) error {
	if c == 'n' {
		d.pos += len("null")
		v.SetZero()
		return nil
	}
	if held := v.Elem(); held.Kind() == reflect.Pointer && !held.IsNil() {
		return d.value(held)
	}
	if v.NumMethod() > 0 && strings.IndexByte(`{["tf`, c) >= 0 {
		return d.mismatch(v.Type()) // (a number is a type error too, but only after the check below)
	}
	var x reflect.Value
	switch c {
	case '{', '[':
		// Decoded as into a map[string]any or []any field: their elements come back here.
		t := reflect.TypeFor[[]any]()
		if c == '{' {
			t = reflect.TypeFor[map[string]any]()
		}
		x = reflect.New(t).Elem()
		if err := d.value(x); err != nil {
			return err
		}
	case '"':
		x = reflect.ValueOf(d.str())
	case 't', 'f':
		x = reflect.ValueOf(c == 't')
		d.literal()
	default:
		num := string(d.literal())
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			x = reflect.ValueOf(n)
		} else if f, err := strconv.ParseFloat(num, 64); err == nil {
			x = reflect.ValueOf(f)
		} else {
			d.saveError(&TypeError{Path: d.here(), Value: "number " + num, Type: float64Type})
			return nil
		}
		if v.NumMethod() > 0 {
			// As with encoding/json, a number too large for a float64 is that error, whatever
			// the interface.
			d.saveError(&TypeError{Path: d.here(), Value: "number", Type: v.Type()})
			return nil
		}
	}
	v.Set(x)
	return nil
}

// intoStruct decodes an object into a struct, member by member in the order of the text.
func (d *decoder) intoStruct(v reflect.Value, dt *decType) error {
	fields := dt.structFields(v.Type())
	base := len(d.given)
	d.given = append(d.given, make([]bool, len(fields))...)
	err := d.members(func(key string) error {
		n := lookup(fields, key)
		if n < 0 {
			d.addStrict(Step{Kind: FieldStep, Name: key}, false)
			d.skip()
			return nil
		}
		if d.given[base+n] {
			d.addStrict(Step{Kind: FieldStep, Name: key}, true)
		}
		d.given[base+n] = true
		d.push(Step{Kind: FieldStep, Name: key})
		defer d.pop()
		fv, err := d.field(v, &fields[n])
		if err != nil {
			return err
		}
		return d.value(fv)
	})
	d.given = d.given[:base]
	return err
}

// field is the member f of the struct v, allocating the embedded structs it is in that are nil
// pointers.
func (d *decoder) field(v reflect.Value, f *decField) (reflect.Value, error) {
	t := v.Type()
	for i, x := range f.index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return v, &UnsupportedTypeError{Path: d.here(), Type: v.Type(),
						Reason: "the field is in an embedded struct of an unexported type held by a nil pointer"}
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	if f.quoted(t) {
		return v, &UnsupportedTypeError{Path: d.here(), Type: v.Type(), Reason: `fields tagged ",string" are not supported`}
	}
	return v, nil
}

// intoMap decodes an object into a map, keeping the entries it has. Each value is decoded into a
// zero element (a key given twice replaces the earlier value), and stored once decoded, even
// after a type error in it.
func (d *decoder) intoMap(v reflect.Value) error {
	t := v.Type()
	if v.IsNil() {
		v.Set(reflect.MakeMap(t))
	}
	keyViaText := decTypeOf(t.Key()).viaText
	key, elem := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
	var keys map[string]bool
	return d.members(func(k string) error {
		if repeated(&keys, k) {
			d.addStrict(Step{Kind: KeyStep, Name: k}, true)
		}
		d.push(Step{Kind: KeyStep, Name: k})
		defer d.pop()
		elem.SetZero()
		if err := d.value(elem); err != nil {
			return err
		}
		key.SetZero()
		if keyViaText {
			if err := key.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(k)); err != nil {
				return &ValueError{Path: d.here(), Kind: "string", Text: k, Err: err}
			}
		} else {
			key.SetString(k)
		}
		v.SetMapIndex(key, elem)
		return nil
	})
}

// intoSlice decodes an array into a slice. As encoding/json does, it reuses the slice's backing
// array: element i is decoded over what is there when i is within the capacity (so a list given
// twice merges), and past it into a zero element; an empty array makes a new empty slice.
func (d *decoder) intoSlice(v reflect.Value) error {
	n := 0
	err := d.items(func(i int) error {
		if i >= v.Len() {
			v.Grow(1)
			v.SetLen(i + 1)
		}
		n = i + 1
		d.push(Step{Kind: IndexStep, Index: i})
		defer d.pop()
		return d.value(v.Index(i))
	})
	switch {
	case err != nil:
		return err
	case n == 0:
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	default:
		v.SetLen(n)
	}
	return nil
}

// intoFromString decodes a JSON string: the UnmarshalText method, a string kind, or base64 into
// a byte slice.
func (d *decoder) intoFromString(v reflect.Value, dt *decType) error {
	switch {
	case dt.viaText:
		s := d.str()
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return &ValueError{Path: d.here(), Kind: "string", Text: s, Err: err}
		}
	case v.Kind() == reflect.String:
		v.SetString(d.str())
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		s := d.str()
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			d.saveError(&ValueError{Path: d.here(), Kind: "string", Text: s, Err: err})
			return nil
		}
		v.SetBytes(b)
	default:
		return d.mismatch(v.Type())
	}
	return nil
}

// intoFromNumber decodes a JSON number into a number kind; one it cannot hold exactly (1.5 or
// 1e2 into an integer, a value out of range) is a type error naming the number.
func (d *decoder) intoFromNumber(v reflect.Value) error {
	num := string(literalAt(d.data, d.pos))
	ok := false
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(num, 10, 64)
		if ok = err == nil && !v.OverflowInt(n); ok {
			v.SetInt(n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(num, 10, 64)
		if ok = err == nil && !v.OverflowUint(n); ok {
			v.SetUint(n)
		}
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(num, v.Type().Bits()) // an error when out of range for the size
		if ok = err == nil; ok {
			v.SetFloat(f)
		}
	default:
		return d.mismatch(v.Type())
	}
	d.pos += len(num)
	if !ok {
		d.saveError(&TypeError{Path: d.here(), Value: "number " + num, Type: v.Type()})
	}
	return nil
}

// mismatch records that the value at d.pos is of a JSON kind t does not take, and skips it.
func (d *decoder) mismatch(t reflect.Type) error {
	d.saveError(&TypeError{Path: d.here(), Value: jsonKind(d.data[d.pos]), Type: t})
	d.skip()
	return nil
}

// methodError is the error of an UnmarshalJSON method given raw, at the current path.
func (d *decoder) methodError(err error, raw []byte) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		// The method decoded its text with encoding/json (metav1.Time does): the kinds are its.
		return &TypeError{Path: d.here(), Value: te.Value, Type: te.Type}
	}
	kind, text := describe(raw)
	return &ValueError{Path: d.here(), Kind: kind, Text: text, Err: err}
}

// jsonKind names the kind of the JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

// describe tells the kind of the JSON value text and, for a string, number or bool, its text.
func describe(text []byte) (kind, value string) {
	switch kind = jsonKind(text[0]); kind {
	case "string":
		d := decoder{data: text}
		return kind, d.str()
	case "number", "bool":
		return kind, string(literalAt(text, 0))
	}
	return kind, ""
}

func (d *decoder) saveError(err error) {
	if d.saved == nil {
		d.saved = err
	}
}

// addStrict records the strict error of the member s of the object being decoded, unless it is
// recorded already or there are MaxStrictErrors.
func (d *decoder) addStrict(s Step, duplicate bool) {
	if len(d.strict) >= MaxStrictErrors {
		return
	}
	p := append(slices.Clip(d.path), s) // a new array: d.path changes
	for _, e := range d.strict {
		if e.Duplicate == duplicate && slices.Equal(e.Path, p) {
			return
		}
	}
	d.strict = append(d.strict, &StrictError{Path: p, Duplicate: duplicate})
}

// repeated tells whether key is in *keys, the keys of an object so far, and adds it.
func repeated(keys *map[string]bool, key string) bool {
	if *keys == nil {
		*keys = map[string]bool{}
	}
	if (*keys)[key] {
		return true
	}
	(*keys)[key] = true
	return false
}

func (d *decoder) push(s Step) { d.path = append(d.path, s) }
func (d *decoder) pop()        { d.path = d.path[:len(d.path)-1] }
func (d *decoder) here() Path  { return slices.Clone(d.path) }

// The reading below trusts the text: Unmarshal checked that it is valid JSON.

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\r', '\n':
			d.pos++
		default:
			return
		}
	}
}

// members calls each for the members of the object at d.pos in order, with d.pos at the value,
// which each must read; it stops at the first error.
func (d *decoder) members(each func(key string) error) error {
	d.pos++ // {
	for {
		d.skipSpace()
		switch d.data[d.pos] {
		case '}':
			d.pos++
			return nil
		case ',':
			d.pos++
			d.skipSpace()
		}
		key := d.str()
		d.skipSpace()
		d.pos++ // :
		d.skipSpace()
		if err := each(key); err != nil {
			return err
		}
	}
}

// items calls each for the elements of the array at d.pos in order, with d.pos at the element,
// which each must read; it stops at the first error.
func (d *decoder) items(each func(i int) error) error {
	d.pos++ // [
	for i := 0; ; i++ {
		d.skipSpace()
		switch d.data[d.pos] {
		case ']':
			d.pos++
			return nil
		case ',':
			d.pos++
			d.skipSpace()
		}
		if err := each(i); err != nil {
			return err
		}
	}
}

// str reads the string at d.pos. Bytes that are not UTF-8 become U+FFFD, one each, as
// encoding/json makes them (the escapes are read by parse.go's parser).
func (d *decoder) str() string {
	p := parser{data: d.data, pos: d.pos}
	s, _ := p.string()
	d.pos = p.pos
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s { // ranging over a string yields U+FFFD for each byte that is not UTF-8
		b.WriteRune(r)
	}
	return b.String()
}

// literal reads the number, true, false or null at d.pos.
func (d *decoder) literal() []byte {
	lit := literalAt(d.data, d.pos)
	d.pos += len(lit)
	return lit
}

func literalAt(data []byte, pos int) []byte {
	end := pos
	for end < len(data) && !strings.ContainsRune(",:]} \t\r\n", rune(data[end])) {
		end++
	}
	return data[pos:end]
}

// skip moves past the value at d.pos.
func (d *decoder) skip() {
	depth := 0
	for {
		switch d.data[d.pos] {
		case '"':
			d.pos++
			for d.data[d.pos] != '"' {
				if d.data[d.pos] == '\\' {
					d.pos++
				}
				d.pos++
			}
			d.pos++
		case '{', '[':
			depth++
			d.pos++
		case '}', ']':
			depth--
			d.pos++
		default:
			if depth == 0 {
				d.literal()
			} else {
				d.pos++
			}
		}
		if depth == 0 {
			return
		}
	}
}
