package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/minicluster-fn/minicluster-fn/fn"
)

func newRootCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "minicluster-fn",
		Short: "Render Flux Framework MiniClusters into plain Kubernetes manifests (no operator needed)",
		Long: `minicluster-fn reads the MiniCluster resources of the Flux Framework operator
(flux-framework.org/v1alpha2) and writes the complete manifest set the operator would create:
the entrypoint ConfigMap, the headless Service, the Indexed Job of Flux brokers and the keygen
pre-step that creates the CURVE certificate in the cluster. Flux CD or Argo CD then apply and
reconcile it from Git; no CRD and no controller are installed.

Without arguments it is a KRM function: it reads a ResourceList on stdin and writes one on
stdout. That is how kustomize (generators:) and kpt (mutators:) run it.`,
		Example: `  # As a kustomize generator (see examples/hello-world):
  kustomize build --enable-alpha-plugins --enable-exec examples/hello-world

  # As a kpt function:
  kpt fn eval --exec minicluster-fn --fn-config minicluster.yaml .

  # In CI, without kustomize:
  minicluster-fn render minicluster.yaml > manifests.yaml`,
		Args:          usageArgs(cobra.NoArgs),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := cmd.InOrStdin()
			if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				return usageErrorf(cmd, "minicluster-fn without arguments reads a KRM ResourceList on stdin, and stdin is a terminal.\n"+
					"To render MiniCluster files, run: minicluster-fn render FILE...")
			}
			return runKRM(in, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.AddCommand(newRenderCmd(), newValidateCmd(), newVersionCmd(), newKeygenCmd(), newFluxcdCmd(), newInstallCmd(), newDiffCmd(), newStatusCmd(), newWaitCmd(), newCheckCmd())
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err: err, command: c.CommandPath()} })
	markCommandErrors(cmd)
	return cmd
}

// newPluginCmd is the command line of the binary installed as the kubectl plugin
// kubectl-minicluster (install --kubectl-plugin): the commands that read the cluster, under the name
// kubectl users type.
func newPluginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   pluginName,
		Short: "See MiniClusters rendered by minicluster-fn in the cluster: check, status and wait",
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl minicluster",
		},
		Args:          usageArgs(cobra.NoArgs),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.AddCommand(newCheckCmd(), newStatusCmd(), newWaitCmd(), newVersionCmd())
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err: err, command: c.CommandPath()} })
	markCommandErrors(cmd)
	return cmd
}

// runKRM is the KRM function: ResourceList in, ResourceList (with results) out. The results are
// also printed to stderr, which kustomize and kpt show to the user. A ResourceList that does not
// parse is described as a file that does not parse (yamlSyntaxProblem): the input is read whole
// first (the function reads all of it before it writes anyway) to find the line again.
func runKRM(in io.Reader, out, errOut io.Writer) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("reading the ResourceList input: %w", err)
	}
	results, err := fn.Processor{}.Stream(bytes.NewReader(data), out)
	printResults(errOut, results)
	if readErr, ok := errors.AsType[*fn.ReadError](err); ok {
		return &fn.ReadError{Err: errors.New(yamlSyntaxProblem(data, readErr.Err))}
	}
	return err
}
