package fn

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestParallelValidation renders many MiniClusters whose hooks are parsed as shell code: they are
// decoded and validated in parallel, so shared parser state would show up here as errors or a
// panic (and as a data race under make unit's -race run).
func TestParallelValidation(t *testing.T) {
	var in strings.Builder
	in.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range 64 {
		fmt.Fprintf(&in, `- apiVersion: flux-framework.org/v1alpha2
  kind: MiniCluster
  metadata:
    name: mc-%02d
    annotations:
      config.kubernetes.io/local-config: "true"
  spec:
    containers:
    - image: ubuntu:noble
      command: echo %d
      commands:
        pre: |
          if [[ ${JOB_COMPLETION_INDEX} -eq 0 ]]; then
            for f in /data/*.%d; do echo "$f"; done
          fi
`, i, i, i)
	}
	var out bytes.Buffer
	results, err := Processor{}.Stream(strings.NewReader(in.String()), &out)
	if err != nil {
		t.Fatalf("Stream: %v\n%v", err, results)
	}
	if n := strings.Count(out.String(), "\n  kind: Job\n"); n < 64 {
		t.Errorf("%d Jobs in the output, want at least 64", n)
	}
}
