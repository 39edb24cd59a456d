package jsontree

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type inner struct {
	A string `json:"a"`
	B int    `json:"b,omitempty"`
}

type ptrMarshaler struct{}

func (p *ptrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{"ptr":true}`), nil }

type zeroer struct{ X int }

func (z zeroer) IsZero() bool { return z.X < 0 }

type outer struct {
	inner
	*Extra
	A        string            `json:"a"` // shadows inner.A
	Named    inner             `json:"named"`
	Skip     string            `json:"-"`
	private  string            //nolint:unused // unexported: never written
	Untagged string            //
	Bytes    []byte            `json:"bytes"`
	NilSlice []string          `json:"nilSlice"`
	Empty    []string          `json:"empty,omitempty"`
	Map      map[string]inner  `json:"map"`
	Iface    any               `json:"iface"`
	Ptr      ptrMarshaler      `json:"ptr"`
	PtrP     *ptrMarshaler     `json:"ptrP"`
	Zero     zeroer            `json:"zero,omitzero"`
	ZeroNeg  zeroer            `json:"zeroNeg,omitzero"`
	Float    float64           `json:"float"`
	Small    float64           `json:"small"`
	Big      float32           `json:"big"`
	Labels   map[string]string `json:"labels,omitempty"`
}

type Extra struct {
	E string `json:"e"`
}

// Edge rules of encoding/json.

// ptrZeroer has IsZero on its pointer only: encoding/json calls it on a copy when the value is not
// addressable.
type ptrZeroer struct{ X int }

func (z *ptrZeroer) IsZero() bool { return z.X == 7 }

type ptrText struct{ S string }

func (p *ptrText) MarshalText() ([]byte, error) { return []byte("text:" + p.S), nil }

type valText int

func (v valText) MarshalText() ([]byte, error) { return []byte("v" + strconv.Itoa(int(v))), nil }

// namedString is a string kind with methods: not written as a plain string.
type namedString string

func (n namedString) MarshalJSON() ([]byte, error) {
	return []byte(`{"named":"` + string(n) + `"}`), nil
}

// ptrByte is a byte whose pointer is a TextMarshaler: a slice of them is an array, not base64.
type ptrByte uint8

func (p *ptrByte) MarshalText() ([]byte, error) { return []byte{'b', byte(*p)}, nil }

type iface interface{ IsZero() bool }

type Deep struct {
	D string `json:"d"`
	X string `json:"x"`
}

type Twin1 struct{ Deep }
type Twin2 struct{ Deep }

// conflicts is an addressable struct with tags that vet and staticcheck rightly reject, so its type
// is made at run time: name conflicts, a tag name that is not valid, and ",string" on every kind.
func conflicts() reflect.Value {
	grace := int64(30)
	fields := []struct {
		name, tag string
		value     any
	}{
		{"Twin1", "", Twin1{Deep{"1", "2"}}}, // Deep reached twice at depth 2: its fields cancel out
		{"Twin2", "", Twin2{}},
		{"A", `json:"same"`, "a"}, // two tagged at one depth: neither is written
		{"B", `json:"same"`, "b"},
		{"C", `json:"D"`, "c"}, // tagged "D" wins over the untagged D at the same depth
		{"D", ``, "d"},
		{"Bad", `json:"a\\b"`, "bad"}, // not a valid name: the field name is used
		{"Quote", `json:"quote,string"`, int64(-3)},
		{"QP", `json:"qp,string"`, &grace},
		{"QS", `json:"qs,string"`, `q"<s>`},
		{"QB", `json:"qb,string"`, true},
		{"QF", `json:"qf,string"`, 1.5},
		{"QNil", `json:"qnil,string"`, (*int64)(nil)},
		{"QMap", `json:"qmap,string"`, map[string]int{"a": 1}}, // not a quotable kind: as usual
		{"QText", `json:"qtext,string"`, valText(4)},           // a TextMarshaler: not quoted
	}
	var sfs []reflect.StructField
	for _, f := range fields {
		sfs = append(sfs, reflect.StructField{Name: f.name, Type: reflect.TypeOf(f.value), Tag: reflect.StructTag(f.tag),
			Anonymous: strings.HasPrefix(f.name, "Twin")})
	}
	v := reflect.New(reflect.StructOf(sfs)).Elem()
	for i, f := range fields {
		v.Field(i).Set(reflect.ValueOf(f.value))
	}
	return v
}

type zeroes struct {
	P     ptrZeroer          `json:"p,omitzero"`
	PNot  ptrZeroer          `json:"pNot,omitzero"`
	PP    *ptrZeroer         `json:"pp,omitzero"`
	PNil  *ptrZeroer         `json:"pNil,omitzero"`
	I     iface              `json:"i,omitzero"`
	INilP iface              `json:"iNilP,omitzero"`
	T     time.Time          `json:"t,omitzero"`
	Plain struct{ A int }    `json:"plain,omitzero"`
	Arr   [2]int             `json:"arr,omitzero"`
	PT    ptrText            `json:"pt"`
	PTs   []ptrText          `json:"pts"`
	PTm   map[string]ptrText `json:"ptm"`
	Named namedString        `json:"named"`
	Bytes []ptrByte          `json:"bytes"`
	Ints  map[int]string     `json:"ints"`
	Uints map[uint8]bool     `json:"uints"`
	Texts map[valText]int    `json:"texts"`
	Arr8  [3]byte            `json:"arr8"`
	Any   any                `json:"any"`
	Empty struct{}           `json:"empty"`
}

// TestFromGoMatchesEncodingJSON: FromGo gives exactly the tree of encoding/json's output.
func TestFromGoMatchesEncodingJSON(t *testing.T) {
	grace := int64(30)
	values := map[string]any{
		"rules": outer{inner: inner{A: "shadowed", B: 2}, A: "top", Named: inner{A: "n"}, Skip: "x", private: "p",
			Untagged: "u", Bytes: []byte("hi\x00"), Empty: []string{}, Map: map[string]inner{"z": {}, "a": {A: "1"}},
			Iface: map[string]any{"k": []any{1, "two", nil}}, ZeroNeg: zeroer{X: -1}, Float: 1.5, Small: 1e-9, Big: 3e21},
		"nil embedded pointer": outer{Extra: nil},
		"set embedded pointer": &outer{Extra: &Extra{E: "e"}, PtrP: &ptrMarshaler{}},
		"pod": &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"b": "2", "a": "1"}, CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC))},
			Spec: corev1.PodSpec{
				TerminationGracePeriodSeconds: &grace,
				Containers: []corev1.Container{{Name: "c", Image: "i",
					Resources:     corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("1Gi")}},
					Ports:         []corev1.ContainerPort{{ContainerPort: 8050}},
					LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromString("http")}}},
				}},
				Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			},
		},
		"job":               &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}},
		"raw":               runtime.RawExtension{Raw: []byte(`{"b":1,"a":[true]}`)},
		"secret data":       &corev1.Secret{Data: map[string][]byte{"k": []byte("v")}, StringData: map[string]string{"s": "t"}},
		"intstr":            []intstr.IntOrString{intstr.FromInt32(3), intstr.FromString("x")},
		"conflicts":         conflicts().Interface(),
		"conflicts pointer": conflicts().Addr().Interface(),
		"zeroes by value":   zeroValues(),
		"zeroes by pointer": ptrTo(zeroValues()),
		"map of zeroes":     map[string]zeroes{"b": zeroValues(), "a": {}},
		"slice of zeroes":   []zeroes{zeroValues()},
	}
	for name, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FromGo(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %s\nwant %s (from %s)", name, got.AppendCanonical(nil), want.AppendCanonical(nil), b)
		}
	}
}

func zeroValues() zeroes {
	return zeroes{P: ptrZeroer{7}, PNot: ptrZeroer{1}, PP: &ptrZeroer{7}, I: &ptrZeroer{7}, INilP: (*ptrZeroer)(nil),
		PT: ptrText{"v"}, PTs: []ptrText{{"s"}}, PTm: map[string]ptrText{"m": {"m"}}, Named: "n",
		Bytes: []ptrByte{1, 2}, Ints: map[int]string{10: "a", -2: "b", 3: "c"}, Uints: map[uint8]bool{7: true},
		Texts: map[valText]int{1: 1, 2: 2}, Arr8: [3]byte{1, 2, 3}, Any: map[string]any{"k": ptrText{"iface"}}}
}

func ptrTo[T any](v T) *T { return &v }

func TestAppendCanonicalDistinguishes(t *testing.T) {
	a, _ := FromGo(map[string]any{"a": "1", "b": []any{"x,y"}})
	b, _ := FromGo(map[string]any{"a": "1", "b": []any{"x", "y"}})
	if string(a.AppendCanonical(nil)) == string(b.AppendCanonical(nil)) {
		t.Error("different trees, same canonical text")
	}
}

// coldTypes are struct types the hello-world objects hold.
var coldTypes = []reflect.Type{
	reflect.TypeFor[batchv1.Job](), reflect.TypeFor[batchv1.JobSpec](), reflect.TypeFor[corev1.PodTemplateSpec](),
	reflect.TypeFor[corev1.PodSpec](), reflect.TypeFor[corev1.Container](), reflect.TypeFor[corev1.Volume](),
	reflect.TypeFor[corev1.VolumeSource](), reflect.TypeFor[corev1.VolumeMount](), reflect.TypeFor[corev1.EnvVar](),
	reflect.TypeFor[corev1.ResourceRequirements](), reflect.TypeFor[corev1.SecurityContext](),
	reflect.TypeFor[metav1.ObjectMeta](), reflect.TypeFor[metav1.TypeMeta](), reflect.TypeFor[corev1.Service](),
	reflect.TypeFor[corev1.ServiceSpec](), reflect.TypeFor[corev1.ConfigMap](), reflect.TypeFor[metav1.Time](),
}

// BenchmarkNewTypeInfo is the first-sight work per type, which every process does (uncached here).
func BenchmarkNewTypeInfo(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range coldTypes {
			newTypeInfo(t)
		}
	}
}

// Floats and tag names at the edges of encoding/json's rules.
func TestFromGoFloatsAndTagNamesMatchEncodingJSON(t *testing.T) {
	floats := []float64{0, 1, -1, 0.5, 1e-6, 9.99999e-7, 1e-7, -1e-7, 1.5e-10, 1e20, 9.99e20, 1e21, -1e21, 1.5e21, 1e100, 1e-100,
		5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125, float64(float32(1e-6)), float64(math.MaxFloat32)}
	for _, f := range floats {
		for _, v := range []any{f, float32(f)} {
			want, err := json.Marshal(v)
			if err != nil {
				continue
			}
			got, err := FromGo(v)
			if err != nil || got.Text != string(want) {
				t.Errorf("%T %v: FromGo %q (%v), encoding/json %s", v, v, got.Text, err, want)
			}
		}
	}
	names := []string{"plain", "with space", "a-b.c/d", "x$y", "üñí", "٣", "a\\b", "a'b", "a`b", "a\"b", "tab\there", "a,b", "é!#$%&()*+-./:;<=>?@[]^_{|}~"}
	for _, name := range names {
		typ := reflect.StructOf([]reflect.StructField{{Name: "Field", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(`json:"` + strings.ReplaceAll(name, `"`, `\"`) + `"`)}})
		v := reflect.New(typ).Interface()
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FromGo(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(want, &m); err != nil || len(m) != 1 {
			t.Fatalf("tag %q: encoding/json wrote %s", name, want)
		}
		for key := range m {
			if len(got.Members) != 1 || got.Members[0].Key != key {
				t.Errorf("tag %q: FromGo members %+v, encoding/json key %q", name, got.Members, key)
			}
		}
	}
}
