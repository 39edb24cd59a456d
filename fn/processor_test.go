package fn

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/frameworktestutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

var update = flag.Bool("update", false, "rewrite the expected files under testdata/")

// TestProcessor runs every testdata/<case>/input.yaml ResourceList through the processor with
// kyaml's framework and compares the output ResourceList with expected.yaml, or the error with the
// regexps of errors.txt (go test ./fn -update rewrites them).
func TestProcessor(t *testing.T) {
	checker := &frameworktestutil.ProcessorResultsChecker{
		Processor:                func() framework.ResourceListProcessor { return Processor{} },
		UpdateExpectedFromActual: *update,
	}
	checker.Assert(t)
}

// TestStreamMatchesFramework: Stream, the binary's path, writes the ResourceList that
// framework.Execute writes for Process, read back by kio: the same items (annotations and all), the
// same functionConfig and the same results, and fails when it fails.
func TestStreamMatchesFramework(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*/input.yaml")
	if err != nil || len(inputs) < 8 {
		t.Fatalf("test inputs: %v, %v", inputs, err)
	}
	for _, input := range inputs {
		t.Run(filepath.Base(filepath.Dir(input)), func(t *testing.T) {
			data, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			var viaFramework, viaStream bytes.Buffer
			frameworkErr := framework.Execute(Processor{}, &kio.ByteReadWriter{Reader: bytes.NewReader(data), Writer: &viaFramework, KeepReaderAnnotations: true})
			_, streamErr := Processor{}.Stream(bytes.NewReader(data), &viaStream)
			if (frameworkErr == nil) != (streamErr == nil) {
				t.Fatalf("framework.Execute: %v; Stream: %v", frameworkErr, streamErr)
			}
			want, got := readBack(t, viaFramework.Bytes()), readBack(t, viaStream.Bytes())
			if want != got {
				t.Errorf("Stream writes\n%s\nframework.Execute writes\n%s", got, want)
			}
		})
	}
}

// readBack reads a ResourceList as an orchestrator does and writes it again with kyaml, so that two
// texts of one ResourceList compare equal.
func readBack(t *testing.T, text []byte) string {
	t.Helper()
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(text), KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		t.Fatalf("output does not read as a ResourceList: %v\n%s", err, text)
	}
	var out bytes.Buffer
	rw.Writer = &out
	if err := rw.Write(items); err != nil {
		t.Fatal(err)
	}
	return out.String()
}
