package impact

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/minicluster-fn/minicluster-fn/fn"
	"github.com/minicluster-fn/minicluster-fn/tests/bench/benchinput"
)

// twoRevisions are the MiniClusters of benchinput.WriteMany (n of them) and the same after a
// mix of edits: a quarter get another command (replaced, one field), a quarter another size
// (replaced: no maxSize), a quarter both (replaced, two fields: the causes are found by
// rendering each alone), a quarter are unchanged.
func twoRevisions(n int) (old, new []byte) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	benchinput.WriteMany(w, n)
	w.Flush()
	items := strings.Split(buf.String(), "\n- ")
	edited := make([]string, len(items))
	for i, item := range items {
		if i == 0 { // the ResourceList's head and the first item
			edited[i] = item
			continue
		}
		k := i - 1
		if k%4 == 0 || k%4 == 2 {
			item = strings.Replace(item, "echo hello world", "echo hello there", 1)
		}
		if k%4 == 1 || k%4 == 2 {
			item = strings.Replace(item, fmt.Sprintf("size: %d\n", 2+k%7), fmt.Sprintf("size: %d\n", 3+k%7), 1)
		}
		edited[i] = item
	}
	return buf.Bytes(), []byte(strings.Join(edited, "\n- "))
}

func readResourceList(b *testing.B, data []byte) *framework.ResourceList {
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(data), KeepReaderAnnotations: true}
	items, err := rw.Read()
	if err != nil {
		b.Fatal(err)
	}
	return &framework.ResourceList{Items: items}
}

// renderBoth is what rendering both revisions costs: read, render and write each.
func renderBoth(b *testing.B, old, new []byte) {
	for _, data := range [][]byte{old, new} {
		if err := (fn.Processor{Standalone: true}).WriteManifests(readResourceList(b, data), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// diffBoth is what diff costs: read and render each revision, and compare.
func diffBoth(b *testing.B, old, new []byte) []Result {
	var sides [2][]Set
	for i, data := range [][]byte{old, new} {
		manifests, err := fn.Processor{Standalone: true}.Generate(readResourceList(b, data))
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range manifests {
			s, err := FromManifestSet(m)
			if err != nil {
				b.Fatal(err)
			}
			sides[i] = append(sides[i], s)
		}
	}
	return Compare(sides[0], sides[1])
}

// BenchmarkDiff1000 compares two revisions of 1,000 MiniClusters (twoRevisions) and, in the same
// iterations, renders both, alternating; diff/render is the ratio of their times (the budget: at
// most 2).
func BenchmarkDiff1000(b *testing.B) {
	old, new := twoRevisions(1000)
	if got := Summary(diffBoth(b, old, new)); got != "1000 MiniClusters: 750 replaced, 250 unchanged" {
		b.Fatalf("summary %q", got)
	}
	var diffTime, renderTime time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		renderBoth(b, old, new)
		renderTime += time.Since(start)
		start = time.Now()
		diffBoth(b, old, new)
		diffTime += time.Since(start)
	}
	b.ReportMetric(float64(diffTime)/float64(renderTime), "diff/render")
	b.ReportMetric(diffTime.Seconds()*1000/float64(b.N), "diff-ms/op")
	b.ReportMetric(renderTime.Seconds()*1000/float64(b.N), "render-both-ms/op")
}
