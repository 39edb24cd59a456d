package jsontree_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
	"github.com/minicluster-fn/minicluster-fn/internal/jsontree"
)

// generated returns the objects generated for the MiniCluster files matched by the patterns
// (relative to this package), skipping files that do not decode or validate.
func generated(tb testing.TB, patterns ...string) []generators.Object {
	tb.Helper()
	var objs []generators.Object
	for _, pattern := range patterns {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			mc, errs := v1alpha2.Decode(data)
			if len(errs) > 0 {
				continue
			}
			mc.Default()
			opts, errs := mc.ParseOptions()
			if len(append(errs, mc.Validate(opts)...)) > 0 {
				continue
			}
			o, _, err := generators.Generate(mc, opts)
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			objs = append(objs, o...)
		}
	}
	return objs
}

// TestFromGoMatchesEncodingJSONGenerated: FromGo gives exactly the tree of encoding/json's
// output for every object generated from the examples and the corpus.
func TestFromGoMatchesEncodingJSONGenerated(t *testing.T) {
	objs := generated(t, "../../examples/*/minicluster.yaml",
		"../../../shared/corpus/flux-operator-examples/*/*/minicluster*.yaml",
		"../../../shared/corpus/flux-operator-examples/*/*/*/minicluster*.yaml")
	if len(objs) < 30 {
		t.Fatalf("only %d objects", len(objs))
	}
	for _, obj := range objs {
		b, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		want, err := jsontree.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsontree.FromGo(obj)
		if err != nil {
			t.Fatalf("%T %s: %v", obj, obj.GetName(), err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T %s:\n got %s\nwant %s", obj, obj.GetName(), got.AppendCanonical(nil), want.AppendCanonical(nil))
		}
	}
}

// TestWriteCanonicalIsAppendCanonical: the text written in pieces through a small buffer is the
// text AppendCanonical builds (the hashes that name Jobs depend on it).
func TestWriteCanonicalIsAppendCanonical(t *testing.T) {
	objs := generated(t, "../../examples/*/minicluster.yaml")
	values := []any{map[string]any{"": "", "long": strings.Repeat("x", 5000), "list": []any{nil, true, 1.5, []any{}}}}
	for _, o := range objs {
		values = append(values, o)
	}
	for _, v := range values {
		tree, err := jsontree.FromGo(v)
		if err != nil {
			t.Fatal(err)
		}
		want := tree.AppendCanonical(nil)
		for _, size := range []int{0, 64, 65, 100, 4096} {
			var got bytes.Buffer
			buf, err := tree.WriteCanonical(&got, make([]byte, 0, size))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%T, buffer of %d: written text differs from AppendCanonical's", v, size)
			}
			if len(buf) != 0 || cap(buf) < size {
				t.Errorf("buffer of %d: returned len %d cap %d", size, len(buf), cap(buf))
			}
		}
	}
}

// BenchmarkFromGo walks every object generated for the hello-world MiniCluster (warm type cache).
func BenchmarkFromGo(b *testing.B) {
	objs := generated(b, "../../examples/hello-world/minicluster.yaml")
	b.ReportAllocs()
	for b.Loop() {
		for _, obj := range objs {
			if _, err := jsontree.FromGo(obj); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkFromGoCanonical is FromGo then AppendCanonical into a reused buffer, as the hashes
// that name Jobs do.
func BenchmarkFromGoCanonical(b *testing.B) {
	objs := generated(b, "../../examples/hello-world/minicluster.yaml")
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		for _, obj := range objs {
			v, err := jsontree.FromGo(obj)
			if err != nil {
				b.Fatal(err)
			}
			buf = v.AppendCanonical(buf[:0])
		}
	}
}
