package fn

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// benchInput is a parsed ResourceList: its items and functionConfig are copied for every run, since
// Process replaces rl.Items.
type benchInput struct {
	items []*yaml.RNode
	fc    *yaml.RNode
}

func (in benchInput) resourceList() *framework.ResourceList {
	rl := &framework.ResourceList{Items: make([]*yaml.RNode, len(in.items))}
	for i, it := range in.items {
		rl.Items[i] = it.Copy()
	}
	if in.fc != nil {
		rl.FunctionConfig = in.fc.Copy()
	}
	return rl
}

func runProcessBench(b *testing.B, in benchInput, wantGenerated int) {
	b.Helper()
	// One checked run, outside the timing.
	rl := in.resourceList()
	if err := (Processor{}).Process(rl); err != nil {
		b.Fatalf("Process: %v (results: %v)", err, rl.Results)
	}
	generated := len(rl.Items) - len(in.items)
	if generated < wantGenerated {
		b.Fatalf("Process generated %d objects, want at least %d", generated, wantGenerated)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		rl := in.resourceList()
		b.StartTimer()
		if err := (Processor{}).Process(rl); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(generated), "objects/op")
}

// BenchmarkProcessHelloWorld runs the hello-world example the way kustomize sends it: the
// MiniCluster as functionConfig and as an item.
func BenchmarkProcessHelloWorld(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "hello-world", "minicluster.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	item, err := yaml.Parse(string(data))
	if err != nil {
		b.Fatal(err)
	}
	runProcessBench(b, benchInput{items: []*yaml.RNode{item}, fc: item.Copy()}, 7)
}

// BenchmarkProcess1000 runs 1,000 MiniClusters (distinct names, one file each) in one ResourceList.
func BenchmarkProcess1000(b *testing.B) {
	const n = 1000
	var items []*yaml.RNode
	for i := range n {
		name := fmt.Sprintf("mc-%05d", i)
		node, err := yaml.Parse(strings.TrimSpace(fmt.Sprintf(`
apiVersion: flux-framework.org/v1alpha2
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
`, name, 2+i%7, i)))
		if err != nil {
			b.Fatal(err)
		}
		items = append(items, node)
	}
	runProcessBench(b, benchInput{items: items}, 7*n)
}

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
