// Command minicluster-fn renders Flux Framework MiniClusters into plain Kubernetes manifests: a KRM
// function for kustomize and kpt, and a CLI for CI pipelines.
package main

import (
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		// Commands print their own errors; cobra's are printed by cobra.
		os.Exit(1)
	}
}
