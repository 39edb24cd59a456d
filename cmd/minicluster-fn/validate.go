package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"

	"github.com/minicluster-fn/minicluster-fn/fn"
)

func newValidateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "validate FILE|DIR... | -",
		Short: "Check MiniCluster files and print every problem found",
		Long: `validate checks MiniCluster documents the way render does (the operator's rules plus
stricter ones: unknown fields, DNS names, hostname length, sizes, one runFlux container,
images, volume sources, no two MiniClusters generating the same object) and prints every
problem, not just the first. Warnings name operator features that behave differently without
the operator. Every MiniCluster of a file without errors gets a line
"ok: FILE: MiniCluster/NAME" on stdout (scripts such as examples/fluxcd/render.sh read them),
also when other files have errors; a file with any error gets no ok line, not even for a valid
MiniCluster in it, since render would refuse it. Exit code 1 if any error was found.

A directory stands for the *.yaml and *.yml files under it that hold a MiniCluster (found by
parsing them; the others are skipped). Every such file there must parse, and a file that holds
a MiniCluster must hold nothing else.`,
		Example: `  minicluster-fn validate examples/*/minicluster.yaml`,
		Args:    usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return validate(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func validate(files []string, stdin io.Reader, out, errOut io.Writer) error {
	nodes, results := readMiniClusterFiles(files, stdin)
	rl := &framework.ResourceList{Items: nodes}
	var checkErr error
	if len(nodes) > 0 {
		checkErr = fn.Processor{Standalone: true}.Check(rl)
	}
	results = append(results, rl.Results...)
	printResults(errOut, results)

	// One bad file must not hide that the others are fine, and must never read as fine itself:
	// every MiniCluster of a file without an error gets its line, and the MiniClusters of a file
	// with any error (in another document, or another object beside them) get none, as render
	// would refuse the file.
	failed := map[string]bool{}
	for _, r := range results {
		if r.Severity == framework.Error && r.File != nil {
			failed[r.File.Path] = true
		}
	}
	for _, item := range rl.Items {
		if !fn.IsMiniCluster(item) {
			continue
		}
		if path, _, _ := kioutil.GetFileAnnotations(item); !failed[path] {
			fmt.Fprintf(out, "ok: %s: MiniCluster/%s\n", path, item.GetName())
		}
	}
	if checkErr != nil {
		return checkErr
	}
	if len(failed) > 0 {
		return errInvalidInput
	}
	return nil
}
