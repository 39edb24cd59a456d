// Command argocd is the Argo CD components the live tests run, in one binary as upstream ships them:
// the application controller, the repo server, the config management plugin server and the Git
// credential helper. Like upstream's cmd/main.go it runs the component named by ARGOCD_BINARY_NAME
// or, when that is unset, by the name it was started under (the build links each name to it). The
// repo server relies on that: it runs Git with GIT_ASKPASS=argocd and
// ARGOCD_BINARY_NAME=argocd-git-ask-pass.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
	gitaskpass "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/common"
	argogrpc "github.com/argoproj/argo-cd/v3/util/grpc"
	argolog "github.com/argoproj/argo-cd/v3/util/log"

	// Upstream's binary links gRPC's grpclb balancer (through the notifications engine's Google
	// Pub/Sub service, which only components left out here use), and grpclb's init turns on DNS
	// SRV lookups (_grpclb._tcp.<host>), which upstream's main turns off again with
	// DisableSRVLookups. That function panics when it finds them already off ("enableSRVLookups
	// expected to be true"), so without grpclb this binary would not start; with it, it has
	// upstream's resolver and balancers.
	_ "google.golang.org/grpc/balancer/grpclb"
)

// binaryNameEnv names the component to run regardless of the executable's name.
const binaryNameEnv = "ARGOCD_BINARY_NAME"

// components maps each component's name to its command. The bool says whether the component is a
// short-lived helper that reports its own errors (upstream silences cobra's error and usage output
// for those and prints the error once itself).
var components = map[string]struct {
	newCommand func() *cobra.Command
	helper     bool
}{
	common.CommandApplicationController: {appcontroller.NewCommand, false},
	common.CommandRepoServer:            {reposerver.NewCommand, false},
	common.CommandCMPServer:             {cmpserver.NewCommand, true},
	common.CommandGitAskPass:            {gitaskpass.NewCommand, true},
}

func main() {
	// klog (client-go's logger) writes through Argo CD's logrus setup, as in upstream's binary.
	klog.SetLogger(argolog.NewLogrusLogger(argolog.NewWithCurrentConfig()))
	// Before any gRPC connection is opened (see the grpclb import).
	argogrpc.DisableSRVLookups()

	name := filepath.Base(os.Args[0])
	if env := os.Getenv(binaryNameEnv); env != "" {
		name = env
	}
	component, ok := components[name]
	if !ok {
		names := make([]string, 0, len(components))
		for n := range components {
			names = append(names, n)
		}
		slices.Sort(names)
		fmt.Fprintf(os.Stderr, "argocd: unknown component %q: start this binary as, or set %s to, one of %s\n",
			name, binaryNameEnv, strings.Join(names, ", "))
		os.Exit(2)
	}

	command := component.newCommand()
	if component.helper {
		command.SilenceErrors = true
		command.SilenceUsage = true
	}
	if err := command.Execute(); err != nil {
		if component.helper {
			// To stderr: Git reads argocd-git-ask-pass's stdout as the credential.
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		}
		os.Exit(1)
	}
}
