package main

import (
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/minicluster-fn/minicluster-fn/fn"
)

func newRenderCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "render FILE|DIR... | -",
		Short: "Print the manifests of the MiniClusters in the given files",
		Long: `render reads MiniCluster documents from files (or stdin with "-") and prints their manifest
sets as one YAML stream, ready to commit for Flux CD or to apply. Every document must be a
MiniCluster. A directory stands for the *.yaml and *.yml files under it that hold a MiniCluster,
as for validate. If any of them is invalid, every problem is printed to stderr, nothing is
printed to stdout and the exit code is 1.`,
		Example: `  minicluster-fn render examples/hello-world/minicluster.yaml
  cat minicluster.yaml | minicluster-fn render - > deploy/flux-sample.yaml`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return render(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func render(files []string, stdin io.Reader, out, errOut io.Writer) error {
	nodes, results := readMiniClusterFiles(files, stdin)
	printResults(errOut, results)
	if len(results) > 0 {
		return errInvalidInput
	}
	rl := &framework.ResourceList{Items: nodes}
	err := fn.Processor{Standalone: true}.WriteManifests(rl, out)
	printResults(errOut, rl.Results)
	return err
}
