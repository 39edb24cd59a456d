// Command minicluster-fn renders Flux Framework MiniClusters into plain Kubernetes manifests: a KRM
// function for kustomize and kpt, and a CLI for CI pipelines.
package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
)

// gcPercent is the garbage collector's target for a run, unless GOGC sets one. A run is one short
// process: at Go's default of 100, rendering hello-world crosses the 4 MB minimum heap goal once, and
// that one collection was about a tenth of the process's CPU (perf); at 200 the goal is 8 MB. For
// 1,000 MiniClusters the peak heap grows with it (214 -> 302 MiB measured; make bench's budget
// for that case is 0.6x of the trivial framework function's 686 MiB).
const gcPercent = 200

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	root := newRootCmd()
	if filepath.Base(os.Args[0]) == pluginName {
		root = newPluginCmd()
	}
	if execute(root) != nil {
		os.Exit(1)
	}
}
