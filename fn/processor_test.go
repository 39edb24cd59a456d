package fn

import (
	"bytes"
	"flag"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var update = flag.Bool("update", false, "rewrite the expected files under testdata/")

// TestProcessor runs every testdata/<case>/input.yaml ResourceList through the function and
// compares the output ResourceList with expected.yaml, or the error with the regexps of
// errors.txt (go test ./fn -update rewrites them). kyaml's framework.Execute drives it, so the
// output is also checked to be what a kyaml framework function would write.
func TestProcessor(t *testing.T) {
	checker := &frameworktestutil.ProcessorResultsChecker{
		Processor:                func() framework.ResourceListProcessor { return streamProcessor{} },
		UpdateExpectedFromActual: *update,
	}
	checker.Assert(t)
}

// streamProcessor runs Stream, the function's own path, as a kyaml framework processor: the
// ResourceList is written out as kyaml writes it, streamed, and read back.
type streamProcessor struct{}

func (streamProcessor) Process(rl *framework.ResourceList) error {
	var in bytes.Buffer
	if err := (kio.ByteWriter{Writer: &in, KeepReaderAnnotations: true, FunctionConfig: rl.FunctionConfig,
		WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}).Write(rl.Items); err != nil {
		return err
	}
	var out bytes.Buffer
	_, err := Processor{}.Stream(&in, &out)
	reader := &kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}
	items, rerr := reader.Read()
	if rerr != nil {
		return rerr
	}
	rl.Items = items
	if reader.Results != nil {
		if yerr := yaml.Unmarshal([]byte(reader.Results.MustString()), &rl.Results); yerr != nil {
			return yerr
		}
	}
	return err
}
