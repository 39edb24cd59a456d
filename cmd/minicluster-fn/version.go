package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and the project image's reference (for Argo CD's repo server and the keygen-image option)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "minicluster-fn %s\nkeygen image: %s\n", version.Version, version.Image())
			return nil
		},
	}
}
