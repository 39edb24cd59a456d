package fn

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runStreamBench times Stream, the path the binary takes, on a ResourceList's text.
func runStreamBench(b *testing.B, input []byte) {
	b.Helper()
	var out bytes.Buffer
	if _, err := (Processor{}).Stream(bytes.NewReader(input), &out); err != nil {
		b.Fatalf("Stream: %v", err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(out.Len()))
	b.ResetTimer()
	for b.Loop() {
		out.Reset()
		if _, err := (Processor{}).Stream(bytes.NewReader(input), &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamHelloWorld is BenchmarkProcessHelloWorld through Stream: text in, text out.
func BenchmarkStreamHelloWorld(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "hello-world", "minicluster.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	indented := "  " + strings.ReplaceAll(strings.TrimSpace(string(data)), "\n", "\n  ")
	input := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + strings.TrimPrefix(indented, "  ") +
		"\nfunctionConfig:\n" + indented + "\n"
	runStreamBench(b, []byte(input))
}

// BenchmarkStream1000 is BenchmarkProcess1000 through Stream.
func BenchmarkStream1000(b *testing.B) {
	var input strings.Builder
	input.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range 1000 {
		name := fmt.Sprintf("mc-%05d", i)
		fmt.Fprintf(&input, `- apiVersion: flux-framework.org/v1alpha2
  kind: MiniCluster
  metadata:
    name: %[1]s
    annotations:
      config.kubernetes.io/local-config: "true"
      internal.config.kubernetes.io/path: clusters/%[1]s.yaml
  spec:
    size: %[2]d
    logging:
      quiet: true
    containers:
    - image: ubuntu:noble
      command: echo hello world %[3]d
`, name, 2+i%7, i)
	}
	runStreamBench(b, []byte(input.String()))
}
