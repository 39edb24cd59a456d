package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// installedName is the file install writes: the name kustomize and kpt find on PATH.
const installedName = "minicluster-fn"

// pluginName is the file install --kubectl-plugin writes: kubectl runs it for `kubectl minicluster`.
const pluginName = "kubectl-minicluster"

func newInstallCmd() *cobra.Command {
	var plugin bool
	cmd := &cobra.Command{
		Use:   "install DIR",
		Short: "Copy this binary to DIR/minicluster-fn, for an init container, or as the kubectl plugin",
		Long: `install copies the running binary to DIR/minicluster-fn, executable, replacing a file of that
name atomically. The project image has no shell and no cp, so this is how an init container of
the image hands the function to another container through a shared volume, for example to put it
on the PATH of Argo CD's repo-server (see examples/argocd).

With --kubectl-plugin it writes DIR/kubectl-minicluster instead: with DIR on the PATH, kubectl runs
it for ` + "`kubectl minicluster status`" + ` and ` + "`kubectl minicluster wait`" + ` (kubectl's plugin convention; flags
go after the plugin's name, and KUBECONFIG is passed on).`,
		Example: `  # An init container of the project image (its entrypoint is minicluster-fn):
  args: [install, /custom-tools]

  # The kubectl plugin:
  minicluster-fn install --kubectl-plugin ~/.local/bin && kubectl minicluster status`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := installedName
			if plugin {
				name = pluginName
			}
			target, err := install(args[0], name)
			if err != nil {
				return &usageError{err: err, command: cmd.CommandPath()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed %s\n", target)
			return nil
		},
	}
	cmd.Flags().BoolVar(&plugin, "kubectl-plugin", false, "write DIR/"+pluginName+", the kubectl plugin")
	return cmd
}

// install copies the running executable to dir/name and returns that path. A reader of the target
// never sees a partial file: the copy is written next to it and renamed.
func install(dir, name string) (string, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("install needs an existing directory, and %q is not one", dir)
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding this binary: %w", err)
	}
	src, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(tmp, src)
	err = errors.Join(err, tmp.Chmod(0o755), tmp.Close())
	target := filepath.Join(dir, name)
	if err == nil {
		err = os.Rename(tmp.Name(), target)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("copying %s to %s: %w", self, target, err)
	}
	return target, nil
}
