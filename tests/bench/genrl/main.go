// Command genrl writes KRM ResourceLists for benchmarking minicluster-fn.
//
//	genrl -n 1000                 N MiniClusters (the hello-world spec, distinct names, one file each)
//	genrl -wrap minicluster.yaml  the ResourceList kustomize sends an exec generator: the
//	                              MiniCluster as an item (with kustomize's annotations) and as
//	                              functionConfig
//
// It uses the standard library only, so it builds in a second.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	n := flag.Int("n", 0, "number of MiniClusters")
	wrap := flag.String("wrap", "", "MiniCluster file to wrap the way kustomize does")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	var err error
	switch {
	case *wrap != "" && *n == 0:
		err = writeWrapped(w, *wrap)
	case *n > 0 && *wrap == "":
		writeMany(w, *n)
	default:
		fmt.Fprintln(os.Stderr, "usage: genrl -n N | genrl -wrap FILE")
		os.Exit(2)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genrl:", err)
		os.Exit(1)
	}
}

func writeMany(w *bufio.Writer, n int) {
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

// writeWrapped reproduces what kustomize v5 sends to an exec generator (captured from
// kustomize build --enable-alpha-plugins --enable-exec examples/hello-world).
func writeWrapped(w *bufio.Writer, file string) error {
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
