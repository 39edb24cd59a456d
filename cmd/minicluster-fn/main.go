// Command minicluster-fn renders Flux Framework MiniClusters into plain Kubernetes manifests: a KRM
// function for kustomize and kpt, and a CLI for CI pipelines.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
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
