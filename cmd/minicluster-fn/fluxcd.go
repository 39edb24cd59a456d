package main

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/minicluster-fn/minicluster-fn/fluxcd"
	"github.com/minicluster-fn/minicluster-fn/internal/objyaml"
)

// brokerHealthCheckModes are the values of --broker-health-check.
const (
	brokerHealthAuto = "auto"
	brokerHealthNone = "none"
)

func newFluxcdCmd() *cobra.Command {
	o := fluxcd.Options{}
	var brokerHealth string
	cmd := &cobra.Command{
		Use:   "fluxcd DIR --url URL --target-namespace NAMESPACE",
		Short: "Print the Flux CD source and Kustomizations that apply a directory of rendered MiniClusters",
		Long: `fluxcd reads DIR, a directory of rendered MiniClusters (minicluster-fn render output, see
examples/fluxcd/render.sh), and prints the Flux CD objects that apply it: a GitRepository or an
OCIRepository, and a kustomize.toolkit.fluxcd.io/v1 Kustomization for each directory that holds
rendered MiniClusters (render.sh writes one per MiniCluster file; a flat DIR gets one). Flux CD's
kustomize-controller runs no KRM functions, so the MiniClusters must reach it rendered.

Each Kustomization prunes. Its health checks never name an object whose name an edit changes
(the hash-named Jobs), so a Kustomization applied from another revision than its directory never
waits for an object that revision lacks:
  - a directory whose MiniClusters all run a command and end gets wait: true, and
    kustomize-controller checks every object of the revision it applied: the keygen Job and the
    broker Job until they complete;
  - a directory with an interactive or persistent MiniCluster, whose broker Job never completes
    (kustomize-controller calls a Job healthy only once it has completed), checks the certificate,
    the headless Service and the services Pod; a note on stderr names each broker Job not checked.`,
		Example: `  # Git: the rendered directory is committed at ./deploy of the repository
  minicluster-fn fluxcd deploy --url https://github.com/org/hpc --branch main \
      --target-namespace hpc > clusters/prod/miniclusters.yaml

  # OCI: CI pushed the directory with flux push artifact
  minicluster-fn fluxcd deploy --source-kind OCIRepository \
      --url oci://ghcr.io/org/hpc-manifests --tag latest --target-namespace hpc`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if problems := completeFluxcdOptions(cmd, args[0], brokerHealth, &o); len(problems) > 0 {
				return &usageError{err: errors.Join(problems...), command: cmd.CommandPath()}
			}
			return runFluxcd(args[0], o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.SourceKind, "source-kind", fluxcd.GitRepositoryKind, "kind of the source: GitRepository or OCIRepository")
	f.StringVar(&o.URL, "url", "", "URL of the Git repository (https://, http://, ssh://) or the OCI artifact (oci://)")
	f.StringVar(&o.Branch, "branch", "", `Git branch to follow (GitRepository; default "main" unless --tag is given)`)
	f.StringVar(&o.Tag, "tag", "", `Git tag, or OCI artifact tag (OCIRepository; default "latest")`)
	f.StringVar(&o.Path, "path", "", "path of DIR inside the source (default: DIR as given for GitRepository, ./ for OCIRepository)")
	f.StringVar(&o.Name, "name", "miniclusters", "name of the source, and of the Kustomizations: NAME-SUBDIR for a subdirectory SUBDIR of DIR, NAME for DIR itself")
	f.StringVar(&o.Namespace, "namespace", "flux-system", "namespace of the source and the Kustomization")
	f.StringVar(&o.TargetNamespace, "target-namespace", "", "namespace the MiniClusters run in (required; it must exist)")
	f.StringVar(&o.SecretRef, "secret-ref", "", "Secret with the credentials of the source, in --namespace")
	f.DurationVar(&o.SourceInterval, "source-interval", 5*time.Minute, "how often the source is checked for new revisions")
	f.DurationVar(&o.Interval, "interval", 10*time.Minute, "how often the Kustomization is applied again (drift correction)")
	f.DurationVar(&o.RetryInterval, "retry-interval", 2*time.Minute, "how soon a failed reconciliation is retried")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "limit for build, apply and health checks; set it above the run time of the MiniClusters whose broker Job is checked")
	f.StringVar(&brokerHealth, "broker-health-check", brokerHealthAuto, "auto: health-check the broker Jobs of MiniClusters that run a command and end; none: never")
	f.BoolVar(&o.Insecure, "insecure", false, "OCIRepository: the registry speaks plain HTTP (a registry on loopback, say)")
	return cmd
}

// completeFluxcdOptions checks the flags and fills in the defaults that depend on others. It
// returns every problem, each naming its flag.
func completeFluxcdOptions(cmd *cobra.Command, dir, brokerHealth string, o *fluxcd.Options) []error {
	var problems []error
	bad := func(format string, a ...any) { problems = append(problems, fmt.Errorf(format, a...)) }
	git := o.SourceKind == fluxcd.GitRepositoryKind
	switch o.SourceKind {
	case fluxcd.GitRepositoryKind:
		if o.Insecure {
			bad("--insecure: only an OCIRepository has it; a GitRepository speaks plain HTTP with an http:// URL")
		}
		if o.URL != "" && !hasAnyPrefix(o.URL, "https://", "http://", "ssh://") {
			bad("--url %q: a GitRepository URL starts with https://, http:// or ssh://", o.URL)
		}
		if o.Branch != "" && o.Tag != "" {
			bad("--branch and --tag: give one of them")
		}
		if o.Branch == "" && o.Tag == "" {
			o.Branch = "main"
		}
	case fluxcd.OCIRepositoryKind:
		if o.URL != "" && !strings.HasPrefix(o.URL, "oci://") {
			bad("--url %q: an OCIRepository URL starts with oci://", o.URL)
		}
		if o.Branch != "" {
			bad("--branch: an OCIRepository has no branches; use --tag")
		}
		if o.Tag == "" {
			o.Tag = "latest"
		}
	default:
		bad("--source-kind %q: must be %s or %s", o.SourceKind, fluxcd.GitRepositoryKind, fluxcd.OCIRepositoryKind)
	}
	if o.URL == "" {
		bad("--url is required: the URL of the Git repository or OCI artifact that holds %s", dir)
	}
	if o.TargetNamespace == "" {
		bad("--target-namespace is required: the rendered objects have no namespace, and kustomize-controller rejects namespaced objects without one")
	}
	for _, n := range []struct {
		flag, value string
		check       func(string) []string
	}{
		{"--name", o.Name, validation.IsDNS1123Subdomain},
		{"--namespace", o.Namespace, validation.IsDNS1123Label},
		{"--target-namespace", o.TargetNamespace, validation.IsDNS1123Label},
		{"--secret-ref", o.SecretRef, validation.IsDNS1123Subdomain},
	} {
		if n.value == "" && n.flag != "--name" && n.flag != "--namespace" {
			continue // optional, or reported as missing above
		}
		for _, msg := range n.check(n.value) {
			bad("%s %q: %s", n.flag, n.value, msg)
		}
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{{"--source-interval", o.SourceInterval}, {"--interval", o.Interval}, {"--retry-interval", o.RetryInterval}, {"--timeout", o.Timeout}} {
		if d.value < time.Second {
			bad("%s %s: must be at least 1s", d.flag, d.value)
		}
	}
	switch brokerHealth {
	case brokerHealthAuto:
		o.BrokerHealthChecks = true
	case brokerHealthNone:
	default:
		bad("--broker-health-check %q: must be %s or %s", brokerHealth, brokerHealthAuto, brokerHealthNone)
	}
	if err := completePath(cmd, dir, git, o); err != nil {
		problems = append(problems, err)
	}
	return problems
}

// completePath checks --path, or derives it: for Git, DIR relative to the current directory (CI
// runs from the repository root); an OCI artifact pushed from DIR has its files at the root.
func completePath(cmd *cobra.Command, dir string, git bool, o *fluxcd.Options) error {
	if cmd.Flags().Changed("path") {
		clean := path.Clean(filepath.ToSlash(o.Path))
		if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("--path %q: must be a path inside the source, like ./deploy", o.Path)
		}
		return nil
	}
	if !git {
		o.Path = "./"
		return nil
	}
	clean := path.Clean(filepath.ToSlash(dir))
	if filepath.IsAbs(dir) || clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("--path is required: DIR %q is not inside the current directory, so its path in the Git repository is unknown", dir)
	}
	o.Path = "./"
	if clean != "." {
		o.Path += clean
	}
	return nil
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func runFluxcd(dir string, o fluxcd.Options, out, errOut io.Writer) error {
	clusters, err := fluxcd.ReadRendered(dir)
	if err != nil {
		return err
	}
	source, kss, notes, err := fluxcd.Objects(clusters, o)
	if err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(errOut, "info: "+n)
	}
	objs := []runtime.Object{source}
	for _, ks := range kss {
		objs = append(objs, ks)
	}
	return objyaml.WriteStream(out, objs...)
}
