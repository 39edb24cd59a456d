// Command genrl writes KRM ResourceLists for benchmarking minicluster-fn.
//
//	genrl -n 1000                 N MiniClusters (the hello-world spec, distinct names, one file each)
//	genrl -wrap minicluster.yaml  the ResourceList kustomize sends an exec generator: the
//	                              MiniCluster as an item (with kustomize's annotations) and as
//	                              functionConfig
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/minicluster-fn/minicluster-fn/tests/bench/benchinput"
)

func main() {
	n := flag.Int("n", 0, "number of MiniClusters")
	wrap := flag.String("wrap", "", "MiniCluster file to wrap the way kustomize does")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	var err error
	switch {
	case *wrap != "" && *n == 0:
		err = benchinput.WriteWrapped(w, *wrap)
	case *n > 0 && *wrap == "":
		benchinput.WriteMany(w, *n)
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
