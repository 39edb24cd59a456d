// Command minicluster-fn renders Flux Framework MiniClusters into plain Kubernetes manifests: a KRM
// function for kustomize and kpt, and a CLI for CI pipelines.
package main

import (
	"fmt"
	"io"
	"os"
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
	stderr := &watchedWriter{w: os.Stderr}
	cmd := newRootCmd()
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil {
		// Commands print their own messages; errors cobra raises itself (an unknown command, a
		// wrong number of arguments) have not been printed yet.
		if !stderr.written {
			fmt.Fprintf(os.Stderr, "error: %v\nRun 'minicluster-fn --help' for usage.\n", err)
		}
		os.Exit(1)
	}
}

// watchedWriter remembers whether anything was written through it.
type watchedWriter struct {
	w       io.Writer
	written bool
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	w.written = w.written || len(p) > 0
	return w.w.Write(p)
}
