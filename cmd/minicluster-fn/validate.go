package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
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
the operator. Exit code 1 if any error was found.

A directory stands for the *.yaml and *.yml files under it that hold a MiniCluster (found by
parsing them; the others are skipped). Every such file there must parse, and a file that holds
a MiniCluster must hold nothing else. For each valid MiniCluster it prints a line
"ok: FILE: MiniCluster/NAME", which scripts such as examples/fluxcd/render.sh read.`,
		Example: `  minicluster-fn validate examples/*/minicluster.yaml`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return validate(args, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func validate(files []string, stdin io.Reader, out, errOut io.Writer) error {
	rl, err := processFiles(files, stdin, errOut)
	if err != nil {
		return err
	}
	for _, item := range rl.Items {
		if fn.IsMiniCluster(item) {
			fmt.Fprintf(out, "ok: %s: MiniCluster/%s\n", item.GetAnnotations()[kioutil.PathAnnotation], item.GetName())
		}
	}
	return nil
}
