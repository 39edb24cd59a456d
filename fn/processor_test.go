package fn

import (
	"flag"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
)

var update = flag.Bool("update", false, "rewrite the expected files under testdata/")

// TestProcessor runs every testdata/<case>/input.yaml ResourceList through the processor and
// compares the output ResourceList with expected.yaml, or the error with the regexps of
// errors.txt (go test ./fn -update rewrites them).
func TestProcessor(t *testing.T) {
	checker := &frameworktestutil.ProcessorResultsChecker{
		Processor:                func() framework.ResourceListProcessor { return Processor{} },
		UpdateExpectedFromActual: *update,
	}
	checker.Assert(t)
}
