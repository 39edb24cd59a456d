package fn

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minicluster-fn/minicluster-fn/tests/bench/benchinput"
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

// BenchmarkStreamHelloWorld runs the hello-world example through Stream: text in, text out.
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

// BenchmarkStream1000 runs 1,000 MiniClusters (distinct names, one file each) in one ResourceList,
// the input of the whole-process script.
func BenchmarkStream1000(b *testing.B) {
	var input bytes.Buffer
	w := bufio.NewWriter(&input)
	benchinput.WriteMany(w, 1000)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	runStreamBench(b, input.Bytes())
}
