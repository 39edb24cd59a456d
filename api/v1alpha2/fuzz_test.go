package v1alpha2_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/tests/outputcheck"
)

// documentLevel tells whether e is about the whole document (it does not parse, is empty or is not
// a mapping), where no field path exists.
func documentLevel(e *field.Error) bool {
	return e.Field == "" && (e.BadValue == "<document>" || strings.HasPrefix(e.Detail, "empty input") ||
		strings.HasPrefix(e.Detail, "wrong type"))
}

// FuzzDecode: Decode, Default, ParseOptions and Validate never panic; input that is not a valid
// MiniCluster always gives at least one error, and every error names a field (spec…, metadata…,
// apiVersion, kind) unless it is about the whole document.
func FuzzDecode(f *testing.F) {
	// Seeds: the examples, the corpus when present, and testdata/fuzz/FuzzDecode (crashers stay there).
	outputcheck.AddSeeds(f)
	for _, doc := range badInputs {
		f.Add([]byte(head + doc + "\n"))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		mc, errs := v1alpha2.Decode(doc)
		if mc == nil && len(errs) == 0 {
			t.Fatal("Decode returned neither a MiniCluster nor an error")
		}
		for _, e := range errs {
			if e.Field == "" && !documentLevel(e) {
				t.Errorf("decode error without a field path: %v", e)
			}
		}
		if mc == nil {
			return
		}
		mc.Default()
		opts, optErrs := mc.ParseOptions()
		for _, e := range append(optErrs, mc.Validate(opts)...) {
			if !hasFieldPath(e.Field) {
				t.Errorf("validation error without a field path: %v", e)
			}
		}
	})
}

func hasFieldPath(p string) bool {
	for _, root := range []string{"spec", "metadata", "apiVersion", "kind"} {
		if p == root || strings.HasPrefix(p, root+".") || strings.HasPrefix(p, root+"[") {
			return true
		}
	}
	return false
}
