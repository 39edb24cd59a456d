package jsontree

import (
	"encoding/json"
	"reflect"
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
		"job":         &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j"}},
		"raw":         runtime.RawExtension{Raw: []byte(`{"b":1,"a":[true]}`)},
		"secret data": &corev1.Secret{Data: map[string][]byte{"k": []byte("v")}, StringData: map[string]string{"s": "t"}},
		"intstr":      []intstr.IntOrString{intstr.FromInt32(3), intstr.FromString("x")},
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

func TestAppendCanonicalDistinguishes(t *testing.T) {
	a, _ := FromGo(map[string]any{"a": "1", "b": []any{"x,y"}})
	b, _ := FromGo(map[string]any{"a": "1", "b": []any{"x", "y"}})
	if string(a.AppendCanonical(nil)) == string(b.AppendCanonical(nil)) {
		t.Error("different trees, same canonical text")
	}
}
