package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/minicluster-fn/minicluster-fn/fn"
	"github.com/minicluster-fn/minicluster-fn/internal/check"
	"github.com/minicluster-fn/minicluster-fn/internal/status"
)

// connectCheck opens the cluster for check; tests replace it.
var connectCheck = func(c status.Connection) (check.API, string, error) {
	api, err := check.Connect(c)
	if err != nil {
		return nil, "", err
	}
	return api, api.Namespace, nil
}

// defaultMiniCluster stands for any MiniCluster when check is given no file: the operator's
// hello-world (examples/hello-world) with the defaults, brokers running as root.
const defaultMiniCluster = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: flux-sample
spec:
  size: 4
  containers:
    - image: ubuntu:noble
      command: echo hello world
`

func newCheckCmd() *cobra.Command {
	var conn status.Connection
	var output, appliedBy string
	cmd := &cobra.Command{
		Use:   "check [FILE|DIR...]",
		Short: "Check, before applying, that the cluster and namespace can run MiniClusters",
		Long: `check reads the cluster with your kubeconfig, as status does, and prints one line per check,
Passed, Failed or Unknown; a line that did not pass names the cause and what to do. It changes
nothing: it only reads, and asks access reviews (SelfSubjectAccessReview, SubjectAccessReview).

Without files it checks the cluster and the namespace for a MiniCluster with the defaults (the
operator's hello-world: brokers that run as root): the Kubernetes version against the Job features
the render uses (Indexed Jobs, pod failure policy, pod replacement policy), the cluster DNS
Service's ready endpoints, the nodes that take pods and their allocatable CPU and memory, that
the namespace exists, its Pod Security level against the render's pods, its ResourceQuotas and
LimitRanges, and whether you may get, create, patch and delete every kind the render emits.
With --applied-by, the rights of the GitOps engine's ServiceAccount as well.

With MiniCluster files (or directories, as for render), each is decoded and rendered exactly as
render does, and checked as well: the checks above for its own objects, whether its brokers fit on
the nodes (requests, nodeSelector, node affinity, taints, one per node with broker-spread:
Required), its image volume (view-source: ImageVolume) against the nodes' kubelet and runtime
versions, and whether the PersistentVolumeClaims, Secrets, ConfigMaps and ServiceAccount it
names exist.

A check whose input the identity may not read (nodes, Secrets, another subject's rights) is
Unknown, never Passed. The exit code is 0 when every check passed, 1 when any failed or could not
tell. -o json prints {"kind": "MiniClusterCheck", "passed", "failed", "unknown", "results": [...]}
(docs/check.md).`,
		Example: `  minicluster-fn check
  minicluster-fn check -n hpc minicluster.yaml
  minicluster-fn check --applied-by flux-system:kustomize-controller -n hpc hpc/
  kubectl minicluster check -o json     # installed as the kubectl plugin kubectl-minicluster`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, files []string) error {
			if output != "" && output != "json" {
				return usageErrorf(cmd, "--output %q: want json", output)
			}
			var subject *check.Subject
			if appliedBy != "" {
				s, err := parseAppliedBy(appliedBy)
				if err != nil {
					return usageErrorf(cmd, "--applied-by %q: %v", appliedBy, err)
				}
				subject = s
			}
			var sets []fn.ManifestSet
			if len(files) > 0 {
				var err error
				if sets, err = renderForCheck(files, cmd.InOrStdin(), cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			api, namespace, err := connectCheck(conn)
			if err != nil {
				return err
			}
			renders, err := checkRenders(sets, namespace)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			results := check.Evaluate(check.Read(ctx, api, renders, subject), renders)
			if err := printCheck(cmd.OutOrStdout(), output, results); err != nil {
				return err
			}
			n := check.Count(results)
			if n[check.Failed]+n[check.Unknown] > 0 {
				return fmt.Errorf("%d of %d checks failed, %d could not tell", n[check.Failed], len(results), n[check.Unknown])
			}
			return nil
		},
	}
	addConnectionFlags(cmd, &conn, false)
	cmd.Flags().StringVarP(&output, "output", "o", "", "json")
	cmd.Flags().StringVar(&appliedBy, "applied-by", "", "NAMESPACE:NAME of the ServiceAccount that applies the manifests (a GitOps engine's): check its rights too, by SubjectAccessReview")
	return cmd
}

// parseAppliedBy reads NAMESPACE:NAME, as kubectl create rolebinding --serviceaccount does.
func parseAppliedBy(s string) (*check.Subject, error) {
	ns, name, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("want NAMESPACE:NAME of a ServiceAccount")
	}
	for _, part := range []struct{ what, v string }{{"namespace", ns}, {"name", name}} {
		if errs := validation.IsDNS1123Subdomain(part.v); len(errs) > 0 {
			return nil, fmt.Errorf("the ServiceAccount's %s %q: %s", part.what, part.v, strings.Join(errs, "; "))
		}
	}
	return &check.Subject{Namespace: ns, Name: name}, nil
}

// renderForCheck reads and renders the MiniClusters of the files as render does; problems are
// printed as render prints them.
func renderForCheck(files []string, stdin io.Reader, errOut io.Writer) ([]fn.ManifestSet, error) {
	nodes, results := readMiniClusterFiles(files, stdin)
	if len(results) > 0 {
		printResults(errOut, results)
		return nil, errInvalidInput
	}
	rl := &framework.ResourceList{Items: nodes}
	sets, err := fn.Processor{Standalone: true}.Generate(rl)
	if err != nil {
		printResults(errOut, rl.Results)
		return nil, errInvalidInput
	}
	return sets, nil
}

// checkRenders are the renders check evaluates: the files' MiniClusters in the namespace each
// names (else namespace), or without files the default MiniCluster in namespace.
func checkRenders(sets []fn.ManifestSet, namespace string) ([]*check.Render, error) {
	if len(sets) == 0 {
		objs, err := fn.GenerateDocument([]byte(defaultMiniCluster))
		if err != nil {
			return nil, fmt.Errorf("rendering the default MiniCluster: %w", err)
		}
		return []*check.Render{{Name: "flux-sample", Namespace: namespace, Objects: objs, Default: true}}, nil
	}
	var renders []*check.Render
	for _, s := range sets {
		ns := s.MiniCluster.Namespace
		if ns == "" {
			ns = namespace
		}
		renders = append(renders, &check.Render{Name: s.MiniCluster.Name, Namespace: ns, File: s.File, Objects: s.Objects})
	}
	return renders, nil
}

// checkReport is the document of -o json.
type checkReport struct {
	Kind    string         `json:"kind"`
	Passed  int            `json:"passed"`
	Failed  int            `json:"failed"`
	Unknown int            `json:"unknown"`
	Results []check.Result `json:"results"`
}

func printCheck(out io.Writer, output string, results []check.Result) error {
	if output == "json" {
		n := check.Count(results)
		b, err := json.MarshalIndent(checkReport{Kind: "MiniClusterCheck", Passed: n[check.Passed], Failed: n[check.Failed],
			Unknown: n[check.Unknown], Results: results}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RESULT\tCHECK\tSCOPE\tMESSAGE")
	for _, r := range results {
		scope := r.Scope
		if r.File != "" {
			scope += " (" + r.File + ")"
		}
		msg := r.Message
		if r.Fix != "" && r.Status != check.Passed {
			msg += ". Fix: " + r.Fix
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Status, r.Check, scope, msg)
	}
	return tw.Flush()
}
