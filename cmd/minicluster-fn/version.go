package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the keygen image the generated Jobs run",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "minicluster-fn %s\nkeygen image: %s\n", version.Version, version.Image())
			return nil
		},
	}
}
