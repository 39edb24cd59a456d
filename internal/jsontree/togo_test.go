package jsontree

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"
)

// upper is a TextUnmarshaler (value kept upper-case; "bad" is an error).
type upper string

func (u *upper) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("upper: bad text")
	}
	*u = upper(strings.ToUpper(string(b)))
	return nil
}

// raw is an Unmarshaler that keeps its JSON text ("[0]" is an error, `"type"` a type error).
type raw struct{ Text string }

func (r *raw) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "[0]":
		return errors.New("raw: no [0]")
	case `"type"`:
		var n int
		return json.Unmarshal(b, &n)
	}
	r.Text = string(b)
	return nil
}

type hidden struct {
	H int `json:"h"`
}

type Base struct {
	B     string `json:"b"`
	Shade string `json:"shade"`
	Tie   int
}

type Other struct {
	Tie int
	O   string `json:"o"`
}

type everything struct {
	Base
	*Other
	Shade string `json:"shade"` // shadows Base.Shade
	Skip  string `json:"-"`
	//lint:ignore SA5008 the member named "-" is what this tests
	Dash     string `json:"-,"`
	Untagged string //
	//lint:ignore U1000 unexported: never decoded, which this tests
	private  string
	I8       int8              `json:"i8"`
	I16      int16             `json:"i16"`
	I32      int32             `json:"i32"`
	I64      int64             `json:"i64"`
	I        int               `json:"i"`
	U8       uint8             `json:"u8"`
	U16      uint16            `json:"u16"`
	U64      uint64            `json:"u64"`
	F32      float32           `json:"f32"`
	F64      float64           `json:"f64"`
	Bool     bool              `json:"bool"`
	Str      string            `json:"str"`
	Bytes    []byte            `json:"bytes"`
	Any      any               `json:"any"`
	AnyPtr   *any              `json:"anyPtr"`
	PtrPtr   **int             `json:"ptrPtr"`
	Stringer fmt.Stringer      `json:"stringer"`
	List     []everything      `json:"list"`
	Ptrs     []*int            `json:"ptrs"`
	MapAny   map[string]any    `json:"mapAny"`
	MapText  map[upper]int     `json:"mapText"`
	Nested   map[string][]int  `json:"nested"`
	Structs  map[string]Base   `json:"structs"`
	Upper    upper             `json:"upper"`
	UpperP   *upper            `json:"upperP"`
	Raw      raw               `json:"raw"`
	RawP     *raw              `json:"rawP"`
	RawMsg   json.RawMessage   `json:"rawMsg"`
	Quantity resource.Quantity `json:"quantity"`
	Time     metav1.Time       `json:"time"`
	TimeP    *metav1.Time      `json:"timeP"`
	IntStr   intstr.IntOrString
	Fields   *metav1.FieldsV1 `json:"fields"`
}

// many has more than 64 fields (more than one machine word of "given" flags).
type many struct {
	F00, F01, F02, F03, F04, F05, F06, F07, F08, F09 int
	F10, F11, F12, F13, F14, F15, F16, F17, F18, F19 int
	F20, F21, F22, F23, F24, F25, F26, F27, F28, F29 int
	F30, F31, F32, F33, F34, F35, F36, F37, F38, F39 int
	F40, F41, F42, F43, F44, F45, F46, F47, F48, F49 int
	F50, F51, F52, F53, F54, F55, F56, F57, F58, F59 int
	F60, F61, F62, F63, F64, F65, F66, F67, F68, F69 int
}

var toGoInputs = []string{
	`{}`, `null`, `[]`, `"x"`, `1`, `true`,
	`{"b":"base","shade":"mine","Tie":1,"o":"other","h":1}`,
	`{"B":"wrong case","SHADE":"x","shade":"y","Shade":"z"}`,
	`{"Skip":"x","-":"dash","Untagged":"u","private":"p"}`,
	`{"i8":127,"i16":-32768,"i32":2147483647,"i64":-9223372036854775808,"i":1,"u8":255,"u16":65535,"u64":18446744073709551615}`,
	`{"i8":128}`, `{"i16":1.0}`, `{"i32":1e2}`, `{"i64":9223372036854775808}`, `{"u8":-1}`, `{"u64":18446744073709551616}`, `{"i":"1"}`,
	`{"f32":3.4e38,"f64":1.7976931348623157e308}`, `{"f32":3.5e38}`, `{"f64":1e400}`, `{"f64":-0,"f32":1e-50}`,
	`{"bool":true,"str":"s"}`, `{"bool":"true"}`, `{"str":1}`, `{"str":false}`, `{"str":{}}`, `{"bool":[]}`,
	`{"bytes":"aGVsbG8="}`, `{"bytes":""}`, `{"bytes":"not base64!"}`, `{"bytes":[1,2]}`, `{"bytes":null}`,
	`{"any":1}`, `{"any":1.5}`, `{"any":-0}`, `{"any":1e2}`, `{"any":12345678901234567890}`, `{"any":1e400}`, `{"any":[1,{"a":[null,true,"s",2.0]}]}`,
	`{"any":{"a":1,"a":2}}`, `{"any":[{"b":{"c":1,"c":1}}]}`, `{"any":null}`, `{"any":"s","any":{"x":1}}`,
	`{"anyPtr":{"a":1}}`, `{"anyPtr":null}`, `{"ptrPtr":3}`, `{"ptrPtr":null}`, `{"ptrPtr":"x"}`,
	`{"stringer":"s"}`, `{"stringer":1e400}`, `{"stringer":1.5}`, `{"stringer":null}`, `{"stringer":{}}`, `{"stringer":[1]}`, `{"stringer":1}`, `{"stringer":true}`,
	`{"array":[1]}`, `{"array":[1,2,3]}`, `{"array":[]}`, `{"array":null}`, `{"array":["x",2]}`,
	`{"list":[{"i":1},{"list":[{"str":"deep","nope":1}]}]}`, `{"list":[null,{}]}`, `{"list":[]}`, `{"list":null}`, `{"list":[1]}`,
	`{"ptrs":[1,null,2]}`, `{"ptrs":[[1]]}`,
	`{"mapAny":{"a":1,"b":[1.5],"c":{"d":null}}}`, `{"mapAny":{}}`, `{"mapAny":null}`, `{"mapAny":[]}`,
	`{"mapInt":{"1":"a","-2":"b"}}`, `{"mapInt":{"x":"a","1":"b"}}`, `{"mapInt":{"99999999999999999999":"a"}}`,
	`{"mapU8":{"255":"a"}}`, `{"mapU8":{"256":"a"}}`, `{"mapU8":{"-1":"a"}}`,
	`{"mapText":{"a":1,"b":2}}`, `{"mapText":{"bad":1}}`, `{"mapBool":{"true":1}}`, `{"mapBool":null}`,
	`{"nested":{"a":[1,2],"b":null,"c":[]}}`, `{"nested":{"a":[1,"x"]}}`, `{"nested":{"a":1}}`,
	`{"structs":{"k":{"b":"v","nope":1},"l":{"b":2}}}`, `{"structs":{"k":{"b":"v"},"k":{"shade":"w"}}}`,
	`{"upper":"abc","upperP":"def"}`, `{"upper":"bad"}`, `{"upper":1}`, `{"upper":null}`, `{"upper":true}`, `{"upper":[]}`, `{"upper":{}}`, `{"upperP":null}`, `{"upperP":5}`,
	`{"raw":{"a" : [1, 2]},"rawP":"s"}`, `{"raw":null,"rawP":null}`, `{"raw":[0]}`, `{"raw":"type"}`, `{"rawP":[0]}`, `{"raw":1,"raw":2}`,
	`{"number":1.5e3}`, `{"number":"12"}`, `{"number":"x"}`, `{"number":"-0.5e+3"}`, `{"number":"1."}`, `{"number":"01"}`, `{"number":"-"}`, `{"number":"1e"}`, `{"number":"2E-1"}`, `{"number":true}`, `{"number":null}`,
	`{"rawMsg":{"a": [1, 2 ]}}`, `{"rawMsg":null}`, `{"rawMsg":"s"}`,
	`{"qInt":"12","qBool":"true","qStr":"\"s\"","qPtr":"7","qFloat":"1.5","qUpper":"u"}`,
	`{"qInt":12}`, `{"qInt":"x"}`, `{"qInt":""}`, `{"qInt":null}`, `{"qInt":"null"}`, `{"qInt":[1]}`, `{"qInt":{}}`, `{"qInt":"1.5"}`, `{"qInt":"true"}`,
	`{"qBool":"x"}`, `{"qBool":"null"}`, `{"qBool":true}`, `{"qBool":"1"}`, `{"qStr":"s"}`, `{"qStr":"\"a"}`, `{"qStr":"1"}`, `{"qPtr":null}`, `{"qPtr":"null"}`, `{"qFloat":"1e400"}`,
	`{"quantity":"500m"}`, `{"quantity":"1Gi"}`, `{"quantity":2}`, `{"quantity":"x"}`, `{"quantity":null}`, `{"quantity":{}}`, `{"quantity":[1]}`, `{"quantity":true}`,
	`{"time":"2024-01-02T03:04:05Z","timeP":"2024-01-02T03:04:05+01:00"}`, `{"time":null,"timeP":null}`, `{"time":"x"}`, `{"time":5}`, `{"timeP":[]}`,
	`{"IntStr":1}`, `{"IntStr":"a"}`, `{"IntStr":1.5}`, `{"IntStr":null}`, `{"IntStr":{}}`,
	`{"fields":{"f:a":{}," f:b":[1,"\u00e9\ud83d\ude00"]}}`, `{"fields":null}`, `{"fields":1}`,
	`{"str":"a\u0000b\ud800\"\\\/\b\f\n\r\t\u2028<>&\u00e9","i":1}`, "{\"str\":\"\xff\xfe\xc3\"}",
	`{"i":"x","str":1,"nope":2}`, `{"nope":1,"i":"x"}`, `{"raw":[0],"i":"x"}`, `{"i":"x","raw":[0]}`, `{"i":1,"i":2,"nope":1,"nope":2}`,
	` { "i" : 1 , "list" : [ { } , { "i" : 2 } ] } `,
	// Decoding stops at a method's error in a list or a map: what is there up to then.
	`{"list":[{"raw":[0]}]}`, `{"list":[{"i":1},{"raw":[0]},{"i":3}]}`, `{"list":[{"i":1},{"i":2},{"i":3},{"i":4},{"i":5},{"i":6},{"raw":[0]}]}`,
	`{"structs":{"a":{"b":"x"},"k":{"raw":[0]}}}`, `{"mapAny":{"a":1,"b":{"raw":[0]}}}`, `{"list":[{"bytes":"!!"},{"i":"x"}]}`, `{"i":"x","bytes":"!!"}`,
	// Empty and escaped names, and names that are not UTF-8.
	`{"":1}`, `{"structs":{"":{"":1}}}`, `{"list":[{"":{"x":1}}]}`, "{\"st\\u0072\":\"x\",\"s\xfftr\":1}",
	`{"str":"\ud800\udc00\udbff\udfff\ud800\ud800\udc00"}`, `{"any":{"x":1,"x":{"y":2,"y":3}}}`, `{"raw":{"a":1,"a":2}}`, `{"rawMsg":{"a":1,"a":2}}`,
	`{"anyPtr":1}`, `{"ptrs":[null]}`, `{"stringer":null,"any":null}`, `{"upperP":{}}`, `{"upperP":[1]}`, `{"upperP":true}`,
	`{"bytes":"aGVsbG8","i":1}`, `{"bytes":"aGVs\nbG8=","i":1}`, `{"u8":-0}`, `{"i8":-0.0}`, `{"Tie":1}`, `{"B":1}`,
	`{"time":"2024-01-02T03:04:05Z","time":null}`, `{"timeP":null,"timeP":"2024-01-02T03:04:05Z"}`, `{"fields":{"a": 1 }}`, `{"IntStr":"1","IntStr":2}`, `{"quantity":"1","quantity":null}`,
}

// TestToGoMatchesSigsJSON: Unmarshal gives what sigs.k8s.io/json's UnmarshalStrict gives (with
// both strict checks): the same value, the same unknown and duplicate fields, the same error.
func TestToGoMatchesSigsJSON(t *testing.T) {
	for _, in := range toGoInputs {
		t.Run(in, func(t *testing.T) {
			compareWithSigs(t, []byte(in), func() any { return new(everything) })
			compareWithSigs(t, []byte(in), func() any { return new(any) })
			compareWithSigs(t, []byte(in), func() any { return new(map[string]everything) })
			compareWithSigs(t, []byte(in), func() any { return new([]everything) })
		})
	}
	for _, in := range []string{`{"F00":1,"F64":2,"F69":3,"F00":4,"F69":5,"F70":6}`, `{"F63":1,"F63":2}`} {
		compareWithSigs(t, []byte(in), func() any { return new(many) })
	}
}

// TestToGoKeepsWhatIsThere: decoding into a value that holds something changes only what the
// text sets, as encoding/json does (a pointer held in an interface is decoded into).
func TestToGoKeepsWhatIsThere(t *testing.T) {
	for _, in := range toGoInputs {
		fill := func() any {
			n := 5
			np := &n
			list := make([]everything, 3, 5)
			list[1].Str = "past the length, within the capacity"
			var held any = &np
			v := &everything{Str: "kept", List: list[:1], MapAny: map[string]any{"old": true},
				Any: &Base{B: "held"}, AnyPtr: &held, PtrPtr: &np, Upper: "U", Bytes: []byte("x")}
			return v
		}
		compareWithSigs(t, []byte(in), fill)
	}
}

func compareWithSigs(t *testing.T, js []byte, newValue func() any) {
	t.Helper()
	got, want := newValue(), newValue()
	gotStrict, gotErr := Unmarshal(js, got)
	wantStrict, wantErr := sigsjson.UnmarshalStrict(js, want, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%T: error %v, sigs.k8s.io/json %v", got, gotErr, wantErr)
	}
	if wantErr != nil {
		if ute, ok := wantErr.(*json.UnmarshalTypeError); ok {
			te, ok := gotErr.(*TypeError)
			if !ok || te.Value != ute.Value || te.Type != ute.Type || structPath(te.Path) != dropEmbedded(ute.Field) {
				t.Fatalf("%T: error %v, sigs.k8s.io/json %v (%s: %s into %v)", got, gotErr, wantErr, ute.Field, ute.Value, ute.Type)
			}
		} else {
			ve, ok := gotErr.(*ValueError)
			if !ok || ve.Err.Error() != wantErr.Error() {
				t.Fatalf("%T: error %T %v, sigs.k8s.io/json %T %v", got, gotErr, gotErr, wantErr, wantErr)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%T: decoded\n%#v\nsigs.k8s.io/json\n%#v", got, got, want)
	}
	var gotNames, wantNames []string
	for _, e := range gotStrict {
		kind := "unknown field "
		if e.Duplicate {
			kind = "duplicate field "
		}
		gotNames = append(gotNames, kind+strconv.Quote(sigsPath(e.Path)))
	}
	for _, e := range wantStrict {
		wantNames = append(wantNames, e.Error())
	}
	slices.Sort(gotNames)
	slices.Sort(wantNames)
	if !slices.Equal(gotNames, wantNames) {
		t.Fatalf("%T: strict errors %q, sigs.k8s.io/json %q", got, gotNames, wantNames)
	}
}

// dropEmbedded leaves the embedded struct names encoding/json puts into a type error's field out.
func dropEmbedded(field string) string {
	var names []string
	for name := range strings.SplitSeq(field, ".") {
		switch name {
		case "Base", "Other":
			continue
		}
		names = append(names, name)
	}
	return strings.Join(names, ".")
}

func sigsPath(p Path) string {
	var b strings.Builder
	for i, s := range p {
		if s.Kind == IndexStep {
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.Name)
	}
	return b.String()
}

func structPath(p Path) string {
	var names []string
	for _, s := range p {
		if s.Kind == FieldStep {
			names = append(names, s.Name)
		}
	}
	return strings.Join(names, ".")
}

// TestToGoPaths: errors name the exact place, list indices and map keys included.
func TestToGoPaths(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"list":[{},{"structs":{"k.1":{"b":1}}}]}`, `json: cannot unmarshal number into list[1].structs[k.1].b of type string`},
		{`{"nested":{"a":[1,2,"x"]}}`, `json: cannot unmarshal string into nested[a][2] of type int`},
		{`{"mapAny":{"a":[1e400]}}`, `json: cannot unmarshal number 1e400 into mapAny[a][0] of type float64`},
		{`{"list":[{"quantity":"x"}]}`, `list[0].quantity: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{`{"list":[{},{"raw":"type"}]}`, `json: cannot unmarshal string into list[1].raw of type int`},
		{`{"list":[{"IntStr":1.5}]}`, `json: cannot unmarshal number 1.5 into list[0].IntStr of type int32`},
		{`{"mapText":{"bad":1}}`, `mapText[bad]: upper: bad text`},
	} {
		_, err := Unmarshal([]byte(tc.in), new(everything))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %s", tc.in, err, tc.want)
		}
	}
	strict, err := Unmarshal([]byte(`{"list":[{"x":1},{"structs":{"k":{"y":2}},"i":1,"i":2}],"mapAny":{"a":{"b":1,"b":2}}}`), new(everything))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range strict {
		got = append(got, e.Error())
	}
	want := []string{`unknown field "list[0].x"`, `unknown field "list[1].structs[k].y"`, `duplicate field "list[1].i"`, `duplicate field "mapAny[a][b]"`}
	if !slices.Equal(got, want) {
		t.Errorf("strict errors %q, want %q", got, want)
	}
}

// TestToGoErrorDetails: a ValueError tells the JSON value that failed.
func TestToGoErrorDetails(t *testing.T) {
	for _, tc := range []struct{ in, kind, text string }{
		{`{"quantity":"5 x"}`, "string", "5 x"},
		{`{"quantity":{"a":1}}`, "object", ""},
		{`{"quantity":[1]}`, "array", ""},
		{`{"quantity":true}`, "bool", "true"},
		{`{"raw":[0]}`, "array", ""},
		{`{"time":"yesterday"}`, "string", "yesterday"},
		{`{"upper":"bad"}`, "string", "bad"},
		{`{"bytes":"!"}`, "string", "!"},
	} {
		_, err := Unmarshal([]byte(tc.in), new(everything))
		var ve *ValueError
		if !errors.As(err, &ve) || ve.Kind != tc.kind || ve.Text != tc.text {
			t.Errorf("%s: %#v, want a ValueError of %s %q", tc.in, err, tc.kind, tc.text)
		}
	}
}

func TestUnmarshalBadArguments(t *testing.T) {
	var e everything
	if _, err := Unmarshal([]byte(`{`), &e); !errors.As(err, new(*SyntaxError)) {
		t.Errorf("invalid JSON: %v", err)
	}
	if _, err := Unmarshal([]byte(`{"a":1} x`), &e); !errors.As(err, new(*SyntaxError)) {
		t.Errorf("text after the value: %v", err)
	}
	if _, err := Unmarshal([]byte(`{}`), e); !errors.As(err, new(*json.InvalidUnmarshalError)) {
		t.Errorf("not a pointer: %v", err)
	}
	if _, err := Unmarshal([]byte(`{}`), (*everything)(nil)); !errors.As(err, new(*json.InvalidUnmarshalError)) {
		t.Errorf("nil pointer: %v", err)
	}
}

// unsupportedKinds has a field of each Go type Unmarshal does not decode (the MiniCluster type graph
// has none; encoding/json has rules of their own for them) and supported ones.
type unsupportedKinds struct {
	*hidden
	Array   [2]int           `json:"array"`
	MapInt  map[int]string   `json:"mapInt"`
	MapBool map[bool]int     `json:"mapBool"`
	Number  json.Number      `json:"number"`
	QInt    int              `json:"qInt,string"`
	QPtr    *bool            `json:"qPtr,string"`
	Complex complex128       `json:"complex"`
	Chan    chan int         `json:"chan"`
	Func    func()           `json:"func"`
	Nested  []map[string]any `json:"nested"`
	Deep    []struct {
		Array [1]string `json:"array"`
	} `json:"deep"`
	I int `json:"i"`
}

// TestUnmarshalUnsupported: a value for a type Unmarshal does not decode is an
// UnsupportedTypeError at its path, which stops decoding; the same types elsewhere in the target
// do not matter when the text has no value for them.
func TestUnmarshalUnsupported(t *testing.T) {
	for in, want := range map[string]string{
		`{"array":[1],"i":1}`:           "array",
		`{"array":null}`:                "array",
		`{"mapInt":{"1":"a"}}`:          "mapInt",
		`{"mapBool":null}`:              "mapBool",
		`{"number":1.5}`:                "number",
		`{"number":"1"}`:                "number",
		`{"qInt":"12"}`:                 "qInt",
		`{"qInt":12}`:                   "qInt",
		`{"qPtr":"true"}`:               "qPtr",
		`{"complex":1}`:                 "complex",
		`{"chan":null}`:                 "chan",
		`{"func":{}}`:                   "func",
		`{"h":1}`:                       "h",
		`{"deep":[{},{"array":["x"]}]}`: "deep[1].array",
	} {
		var v unsupportedKinds
		_, err := Unmarshal([]byte(in), &v)
		var ue *UnsupportedTypeError
		if !errors.As(err, &ue) || ue.Path.String() != want {
			t.Errorf("%s: error %v, want an UnsupportedTypeError at %s", in, err, want)
		}
		if v.I != 0 {
			t.Errorf("%s: decoding went on after the error", in)
		}
	}
	for _, in := range []string{`{"i":1,"nested":[{"a":[1,2.5]}],"deep":[{}],"x":1}`, `{}`, `{"i":"x"}`, `{"deep":[{"nope":1}],"deep":null}`} {
		compareWithSigs(t, []byte(in), func() any { return new(unsupportedKinds) })
	}
	// A nil embedded pointer to an exported struct is allocated.
	type withPtr struct {
		*Base
		I int `json:"i"`
	}
	compareWithSigs(t, []byte(`{"b":"x","i":1}`), func() any { return new(withPtr) })
}

// TestStrictErrorsAtMost100: like sigs.k8s.io/json, at most 100 strict errors, each once.
func TestStrictErrorsAtMost100(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"x":1,"x":2`)
	for i := range 150 {
		fmt.Fprintf(&b, `,"u%d":1`, i)
	}
	b.WriteString(`}`)
	strict, err := Unmarshal([]byte(b.String()), new(everything))
	if err != nil {
		t.Fatal(err)
	}
	if len(strict) != 100 || strict[0].Path.String() != "x" || strict[1].Path.String() != "u0" {
		t.Errorf("%d strict errors, first %v %v", len(strict), strict[0], strict[1])
	}
	compareWithSigs(t, []byte(b.String()), func() any { return new(everything) })
	// The 100 are the first in the order of the text, a field given twice among them.
	b.Reset()
	b.WriteString(`{`)
	for i := range 120 {
		fmt.Fprintf(&b, `"u%d":1,"i":%d,`, i, i)
	}
	b.WriteString(`"i":0}`)
	compareWithSigs(t, []byte(b.String()), func() any { return new(everything) })
}

// TestUnmarshalConcurrently: the type caches are shared safely (run with -race).
func TestUnmarshalConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for _, in := range toGoInputs {
				var v everything
				_, _ = Unmarshal([]byte(in), &v)
				var m many
				_, _ = Unmarshal([]byte(`{"F01":1}`), &m)
			}
		})
	}
	wg.Wait()
}

func BenchmarkUnmarshal(b *testing.B) {
	js := []byte(`{"i":1,"str":"s","list":[{"i":2,"mapAny":{"a":[1,2]}}],"quantity":"500m","time":"2024-01-02T03:04:05Z","structs":{"k":{"b":"v"}}}`)
	b.Run("jsontree", func(b *testing.B) {
		for b.Loop() {
			var v everything
			if _, err := Unmarshal(js, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sigsjson", func(b *testing.B) {
		for b.Loop() {
			var v everything
			if _, err := sigsjson.UnmarshalStrict(js, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzUnmarshalMatchesSigsJSON: on any JSON text, Unmarshal gives what sigs.k8s.io/json gives,
// into a struct with every kind of field and into an empty interface.
func FuzzUnmarshalMatchesSigsJSON(f *testing.F) {
	for _, in := range toGoInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		if !json.Valid(js) {
			if _, err := Unmarshal(js, new(everything)); !errors.As(err, new(*SyntaxError)) {
				t.Fatalf("invalid JSON: %v", err)
			}
			return
		}
		compareWithSigs(t, js, func() any { return new(everything) })
		compareWithSigs(t, js, func() any { return new(any) })
	})
}
