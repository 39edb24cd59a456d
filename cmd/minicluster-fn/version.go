package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

func newVersionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, Go version and the project image's reference (for Argo CD's repo server and the keygen-image option)",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			out := cmd.OutOrStdout()
			switch output {
			case "json":
				b, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			case "yaml":
				b, err := sigsyaml.Marshal(info)
				if err != nil {
					return err
				}
				_, err = out.Write(b)
				return err
			}
			commit := info.Commit
			if commit == "" {
				commit = "unknown"
			}
			// The keygen image stays the last line: scripts read it with sed.
			_, err := fmt.Fprintf(out, "minicluster-fn %s\ncommit: %s\ngo: %s %s\nkeygen image: %s\n",
				info.Version, commit, info.GoVersion, info.Platform, info.KeygenImage)
			return err
		},
	}
	checkedFlag(cmd, &output, "output", "o", "text", "text, json or yaml", oneOf("text", "json", "yaml"))
	return cmd
}
