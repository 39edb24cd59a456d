// Package benchinput writes the KRM ResourceLists the benchmarks feed minicluster-fn: the Go
// benchmarks in fn and the whole-process script (through cmd genrl) time the same inputs.
package benchinput

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// WriteMany writes a ResourceList of n MiniClusters (the hello-world spec, distinct names, one
// file each).
func WriteMany(w *bufio.Writer, n int) {
	w.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range n {
		name := fmt.Sprintf("mc-%05d", i)
		fmt.Fprintf(w, `- apiVersion: flux-framework.org/v1alpha2
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
}

// WriteWrapped reproduces what kustomize v5 sends to an exec generator (captured from
// kustomize build --enable-alpha-plugins --enable-exec examples/hello-world).
func WriteWrapped(w *bufio.Writer, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(data), "\n"), "\n") {
		if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") || t == "---" {
			continue
		}
		lines = append(lines, l)
	}
	w.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i, l := range lines {
		prefix := "  "
		if i == 0 {
			prefix = "- "
		}
		w.WriteString(prefix + l + "\n")
		if strings.TrimSpace(l) == "annotations:" {
			ind := strings.Repeat(" ", len(l)-len(strings.TrimLeft(l, " "))+2)
			for _, a := range []string{
				`config.kubernetes.io/index: '0'`,
				`internal.config.kubernetes.io/index: '0'`,
				`internal.config.kubernetes.io/annotations-migration-resource-id: '0'`,
				`internal.config.kubernetes.io/id: '1'`,
				`config.k8s.io/id: '1'`,
			} {
				w.WriteString("  " + ind + a + "\n")
			}
		}
	}
	w.WriteString("functionConfig:\n")
	for _, l := range lines {
		w.WriteString("  " + l + "\n")
	}
	return nil
}
