package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/cluster/check"
	"github.com/minicluster-fn/minicluster-fn/cluster/status"
	"github.com/minicluster-fn/minicluster-fn/fn"
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

// connectSmoke opens the cluster for check --smoke, in namespace; tests replace it.
var connectSmoke = func(c status.Connection, namespace string) (check.SmokeAPI, error) {
	cfg, _, err := c.Load()
	if err != nil {
		return nil, err
	}
	return check.NewSmokeREST(cfg, namespace)
}

// smokeSize is the size of the MiniCluster check --smoke runs: two brokers, so that one joins the
// other.
const smokeSize = 2

// smokeCommand is the command check --smoke runs on every rank (flux runs it on each of the
// smokeSize brokers, and the broker Job completes only if every one exited 0).
const smokeCommand = "hostname"

// smokeFlags are check --smoke's options.
type smokeFlags struct {
	run              bool
	image, viewImage string
	timeout          time.Duration
}

func newCheckCmd() *cobra.Command {
	var conn status.Connection
	var output, appliedBy string
	var smoke smokeFlags
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

With --smoke it also runs a MiniCluster end to end in the namespace, the only time check changes
anything: the MiniCluster with the defaults, or the one MiniCluster of the files, at size 2 with
the command hostname on every rank (--image replaces its application image, --view-image the flux
view's). It creates the rendered objects, prints each step's time as it ends (create, keygen: the
certificate; pull: every container of both broker pods started from its image; join: both
brokers joined; command: it ran on every rank and the broker Job completed), and a failed step's
reason as status gives it. Then it deletes everything it created, also when a step failed or on
Ctrl-C, and waits until the pods are gone. This is how to prove the project on a real cluster
with the real images.

A check whose input the identity may not read (nodes, Secrets, another subject's rights) is
Unknown, never Passed. The exit code is 0 when every check passed, 1 when any failed or could not
tell. -o json prints {"kind": "MiniClusterCheck", "summary", "passed", "failed", "unknown", "results": [...]}
(docs/check.md).`,
		Example: `  minicluster-fn check
  minicluster-fn check -n hpc minicluster.yaml
  minicluster-fn check --applied-by flux-system:kustomize-controller -n hpc hpc/
  minicluster-fn check --smoke -n hpc
  minicluster-fn check --smoke --image ghcr.io/converged-computing/metric-lammps:latest -n hpc
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
			if !smoke.run && (smoke.image != "" || smoke.viewImage != "") {
				return usageErrorf(cmd, "--image and --view-image are options of --smoke")
			}
			var sets []fn.ManifestSet
			var nodes []*yaml.RNode
			if len(files) > 0 {
				var err error
				if nodes, sets, err = renderForCheck(files, cmd.InOrStdin(), cmd.ErrOrStderr()); err != nil {
					return err
				}
				if smoke.run && len(nodes) != 1 {
					return usageErrorf(cmd, "--smoke runs one MiniCluster, and the files hold %d", len(nodes))
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
			if smoke.run {
				smokeResults, err := runSmoke(ctx, conn, nodes, namespace, smoke, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				results = append(results, smokeResults...)
			}
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
	cmd.Flags().BoolVar(&smoke.run, "smoke", false, "also run a MiniCluster of size 2 end to end in the namespace, then delete it")
	cmd.Flags().StringVar(&smoke.image, "image", "", "with --smoke: the application image to run (default: the MiniCluster's)")
	cmd.Flags().StringVar(&smoke.viewImage, "view-image", "", "with --smoke: the flux view image (default: the MiniCluster's, else the render's default)")
	cmd.Flags().DurationVar(&smoke.timeout, "timeout", 10*time.Minute, "with --smoke: how long the steps from create to the command's end may take")
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

// renderForCheck reads and renders the MiniClusters of the files as render does, and returns
// them as read and as rendered; problems are printed as render prints them.
func renderForCheck(files []string, stdin io.Reader, errOut io.Writer) ([]*yaml.RNode, []fn.ManifestSet, error) {
	nodes, results := readMiniClusterFiles(files, stdin)
	if len(results) > 0 {
		printResults(errOut, results)
		return nil, nil, errInvalidInput
	}
	// Generate adds and removes annotations of the nodes it is given.
	copies := make([]*yaml.RNode, len(nodes))
	for i, n := range nodes {
		copies[i] = n.Copy()
	}
	rl := &framework.ResourceList{Items: nodes}
	sets, err := fn.Processor{Standalone: true}.Generate(rl)
	if err != nil {
		printResults(errOut, rl.Results)
		return nil, nil, errInvalidInput
	}
	return copies, sets, nil
}

// runSmoke runs check --smoke: the one MiniCluster of nodes, else the default one, made a smoke
// MiniCluster and run in its namespace (else namespace). Each step's result is printed to progress
// as it ends.
func runSmoke(ctx context.Context, conn status.Connection, nodes []*yaml.RNode, namespace string, f smokeFlags, progress io.Writer) ([]check.Result, error) {
	doc, file := []byte(defaultMiniCluster), ""
	if len(nodes) == 1 {
		s, err := nodes[0].String()
		if err != nil {
			return nil, err
		}
		doc, file = []byte(s), nodes[0].GetAnnotations()[kioutil.PathAnnotation]
	}
	r, err := smokeRender(doc, namespace, f)
	if err != nil {
		return nil, fmt.Errorf("--smoke: %w", err)
	}
	r.File = file
	api, err := connectSmoke(conn, r.Namespace)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "smoke: running MiniCluster %s (size %d, command %s) in namespace %s\n", r.Name, smokeSize, smokeCommand, r.Namespace)
	s := check.Smoke{API: api, Render: r, Timeout: f.timeout, Poll: pollInterval, DeleteTimeout: 2 * time.Minute,
		Progress: func(res check.Result) {
			msg := res.Message
			if res.Fix != "" && res.Status != check.Passed {
				msg += ". Fix: " + res.Fix
			}
			fmt.Fprintf(progress, "smoke: %s %s: %s\n", res.Status, res.Check, msg)
		}}
	return s.Run(ctx), nil
}

// smokeRender makes doc, a MiniCluster, the one check --smoke runs, and renders it: a new name
// (smoke-<5 random characters>, so that it meets nothing of the user's), its namespace (else
// namespace), size 2, and a command that runs on every rank and ends (no interactive, launcher,
// batch or script); --image and --view-image replace the images. Everything else is the
// MiniCluster's: its images, resources, volumes, options.
func smokeRender(doc []byte, namespace string, f smokeFlags) (*check.Render, error) {
	var mc map[string]any
	if err := sigsyaml.Unmarshal(doc, &mc); err != nil {
		return nil, err
	}
	metadata, _ := mc["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
	}
	name := "smoke-" + utilrand.String(5)
	metadata["name"] = name
	if ns, _ := metadata["namespace"].(string); ns != "" {
		namespace = ns
	}
	metadata["namespace"] = namespace
	// What the files' reader added (the file's path, the document's index) is not the MiniCluster's.
	if annotations, ok := metadata["annotations"].(map[string]any); ok {
		for k := range annotations {
			if strings.HasPrefix(k, "config.kubernetes.io/") || strings.HasPrefix(k, "internal.config.kubernetes.io/") {
				delete(annotations, k)
			}
		}
	}
	mc["metadata"] = metadata
	spec, _ := mc["spec"].(map[string]any)
	if spec == nil {
		return nil, fmt.Errorf("MiniCluster has no spec")
	}
	spec["size"] = smokeSize
	for _, field := range []string{"maxSize", "interactive", "tasks"} {
		delete(spec, field)
	}
	containers, _ := spec["containers"].([]any)
	if len(containers) == 0 {
		return nil, fmt.Errorf("MiniCluster has no spec.containers")
	}
	// The command goes to the containers that run flux (runFlux; the first when none says so).
	runsFlux := func(c map[string]any) bool { b, _ := c["runFlux"].(bool); return b }
	anyRunsFlux := slices.ContainsFunc(containers, func(c any) bool { m, _ := c.(map[string]any); return m != nil && runsFlux(m) })
	for i, c := range containers {
		m, _ := c.(map[string]any)
		if m == nil || !(runsFlux(m) || !anyRunsFlux && i == 0) {
			continue
		}
		m["command"] = smokeCommand
		for _, field := range []string{"launcher", "batch", "batchRaw"} {
			delete(m, field)
		}
		if commands, ok := m["commands"].(map[string]any); ok {
			delete(commands, "script")
		}
		if f.image != "" {
			m["image"] = f.image
		}
	}
	if f.viewImage != "" {
		flux, _ := spec["flux"].(map[string]any)
		if flux == nil {
			flux = map[string]any{}
		}
		container, _ := flux["container"].(map[string]any)
		if container == nil {
			container = map[string]any{}
		}
		container["image"] = f.viewImage
		flux["container"] = container
		spec["flux"] = flux
	}
	out, err := sigsyaml.Marshal(mc)
	if err != nil {
		return nil, err
	}
	objs, err := fn.GenerateDocument(out)
	if err != nil {
		return nil, fmt.Errorf("rendering the smoke MiniCluster: %w", err)
	}
	return &check.Render{Name: name, Namespace: namespace, Objects: objs}, nil
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

// checkReport is the document of -o json. It reads as diff's does: the kind, the summary line,
// then one item per finding.
type checkReport struct {
	Kind    string         `json:"kind"`
	Summary string         `json:"summary"`
	Passed  int            `json:"passed"`
	Failed  int            `json:"failed"`
	Unknown int            `json:"unknown"`
	Results []check.Result `json:"results"`
}

// printCheck writes the report: one line per check, with what to do where it did not pass, and a
// summary line of the counts, as diff writes one line per MiniCluster and its summary.
func printCheck(out io.Writer, output string, results []check.Result) error {
	if output == "json" {
		n := check.Count(results)
		b, err := json.MarshalIndent(checkReport{Kind: "MiniClusterCheck", Summary: check.Summary(results), Passed: n[check.Passed], Failed: n[check.Failed],
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
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, check.Summary(results))
	return err
}
