package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/minicluster-fn/minicluster-fn/api/contract"
	"github.com/minicluster-fn/minicluster-fn/cluster/check"
	"github.com/minicluster-fn/minicluster-fn/cluster/check/checktest"
	"github.com/minicluster-fn/minicluster-fn/cluster/status"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

// useCheckFixture makes check read testdata/check/<file> in namespace hpc, in place of a cluster.
func useCheckFixture(t *testing.T, file string) *checktest.Cluster {
	t.Helper()
	c, err := checktest.Load(filepath.Join("testdata", "check", file))
	if err != nil {
		t.Fatal(err)
	}
	old := connectCheck
	t.Cleanup(func() { connectCheck = old })
	connectCheck = func(conn status.Connection) (check.API, string, error) {
		ns := conn.Namespace
		if ns == "" {
			ns = "default"
		}
		return c, ns, nil
	}
	return c
}

// TestCheckGolden: check's output for the fixture cluster, without files (the namespace's checks
// for a MiniCluster with the defaults, which all pass there) and with two MiniClusters, one of which
// does not fit (goldens under testdata/check; -update rewrites them). A run with a check that did
// not pass exits non-zero with the counts on stderr.
func TestCheckGolden(t *testing.T) {
	files := filepath.Join("testdata", "check", "miniclusters.yaml")
	for _, tc := range []struct {
		golden string
		args   []string
		// summary is the error's line ("" for none: every check passed).
		summary string
	}{
		{"defaults.txt", []string{"-n", "hpc"}, ""},
		{"files.txt", []string{"-n", "hpc", files}, "3 of 20 checks failed, 1 could not tell"},
		{"json.json", []string{"-n", "hpc", "-o", "json", "--applied-by", "flux-system:kustomize-controller", files}, "3 of 22 checks failed, 1 could not tell"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			useCheckFixture(t, "cluster.yaml")
			out, errOut, err := runCmd(t, "", append([]string{"check"}, tc.args...)...)
			golden(t, filepath.Join("testdata", "check", tc.golden), out)
			switch {
			case tc.summary == "" && (err != nil || errOut != ""):
				t.Errorf("check %v: %v\n%s", tc.args, err, errOut)
			case tc.summary != "" && (err == nil || errOut != "error: "+tc.summary+"\n"):
				t.Errorf("check %v: err %v, stderr %q, want the summary %q", tc.args, err, errOut, tc.summary)
			}
		})
	}
}

// TestCheckJSON: -o json is one document whose counts match its results, each with a status.
func TestCheckJSON(t *testing.T) {
	useCheckFixture(t, "cluster.yaml")
	out, _, _ := runCmd(t, "", "check", "-n", "hpc", "-o", "json", filepath.Join("testdata", "check", "miniclusters.yaml"))
	var report checkReport
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("-o json does not parse: %v\n%s", err, out)
	}
	n := check.Count(report.Results)
	if report.Kind != "MiniClusterCheck" || report.Passed != n[check.Passed] || report.Failed != n[check.Failed] || report.Unknown != n[check.Unknown] ||
		report.Passed+report.Failed+report.Unknown != len(report.Results) || report.Failed == 0 {
		t.Errorf("report counts %d/%d/%d, results %v", report.Passed, report.Failed, report.Unknown, n)
	}
}

// TestCheckAppliedByForbidden: when the identity may not create subjectaccessreviews, the
// --applied-by check says so and does not pass.
func TestCheckAppliedByForbidden(t *testing.T) {
	useCheckFixture(t, "forbidden.yaml")
	out, errOut, err := runCmd(t, "", "check", "-n", "hpc", "--applied-by", "argocd:argocd-application-controller")
	if err == nil {
		t.Fatalf("check passed on a cluster that answers nothing:\n%s", out)
	}
	for _, want := range []string{
		"Unknown  access-applied-by", "cannot tell: forbidden to create subjectaccessreviews, which asking about ServiceAccount argocd/argocd-application-controller takes",
		"Unknown  nodes", "cannot tell: forbidden to list nodes",
		"Unknown  indexed-job", "cannot tell: could not read the server's version",
		"Unknown  pod-security", "cannot tell: forbidden to get namespace hpc",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Passed  access-applied-by") || !strings.Contains(errOut, "could not tell") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
}

// TestCheckBadInput: an invalid MiniCluster is reported as render reports it, naming the file and
// the field, and nothing is read from the cluster.
func TestCheckBadInput(t *testing.T) {
	c := useCheckFixture(t, "cluster.yaml")
	doc := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: bad}\nspec:\n  size: -1\n  containers: [{image: ubuntu:noble}]\n"
	out, errOut, err := runCmd(t, doc, "check", "-")
	if err == nil || out != "" || !strings.Contains(errOut, "spec.size") || c.Reviews != 0 {
		t.Errorf("check of an invalid MiniCluster: %v, stdout %q, stderr %q, %d reviews", err, out, errOut, c.Reviews)
	}
	for _, args := range [][]string{{"check", "-o", "yaml"}, {"check", "--applied-by", "kustomize-controller"}} {
		if _, errOut, err := runCmd(t, "", args...); err == nil || !strings.Contains(errOut, "Run 'minicluster-fn check --help' for usage.") {
			t.Errorf("%v: %v, stderr %q", args, err, errOut)
		}
	}
}

// TestCheckSmokeRender: --smoke runs the file's MiniCluster under a new name at size 2, as a
// command that ends, with --image and --view-image in place of its images; the rest is its own.
func TestCheckSmokeRender(t *testing.T) {
	doc := `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: lammps
  namespace: hpc
  annotations: {config.kubernetes.io/path: lammps.yaml}
spec:
  size: 8
  maxSize: 10
  tasks: 16
  interactive: true
  containers:
    - image: ghcr.io/converged-computing/metric-lammps:latest
      command: lmp -in in.reaxc.hns
      launcher: true
      resources: {limits: {cpu: 2}}
`
	r, err := smokeRender([]byte(doc), "default", smokeFlags{image: "registry.example/app:1", viewImage: "registry.example/view:2"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Name, "smoke-") || len(r.Name) != len("smoke-")+5 || r.Namespace != "hpc" {
		t.Errorf("name %q, namespace %q: want smoke-<5 characters> in the MiniCluster's namespace hpc", r.Name, r.Namespace)
	}
	var job *batchv1.Job
	for _, o := range r.Objects {
		if j, ok := o.(*batchv1.Job); ok && j.Labels[contract.LabelComponent] == contract.ComponentBroker {
			job = j
		}
	}
	if job == nil {
		t.Fatal("no broker Job rendered")
	}
	if p := job.Spec.Parallelism; p == nil || *p != smokeSize {
		t.Errorf("broker Job parallelism %v, want %d", p, smokeSize)
	}
	if l := job.Labels[contract.LabelLifetime]; l != contract.LifetimeCompletes {
		t.Errorf("lifetime %q, want %q (interactive and the launcher dropped)", l, contract.LifetimeCompletes)
	}
	if v := job.Annotations[contract.AnnotationViewImage]; v != "registry.example/view:2" {
		t.Errorf("view image %q", v)
	}
	app := job.Spec.Template.Spec.Containers[0]
	if app.Image != "registry.example/app:1" || app.Resources.Limits.Cpu().String() != "2" {
		t.Errorf("application container: image %q, limits %v", app.Image, app.Resources.Limits)
	}
	for _, o := range r.Objects {
		for k := range o.GetAnnotations() {
			if strings.HasPrefix(k, "config.kubernetes.io/") {
				t.Errorf("%s %s carries the file reader's annotation %s", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), k)
			}
		}
	}
}

// TestCheckSmokeUsage: the smoke flags need --smoke, and --smoke one MiniCluster.
func TestCheckSmokeUsage(t *testing.T) {
	useCheckFixture(t, "cluster.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--image", "x:1"}, "--image and --view-image are options of --smoke"},
		{[]string{"check", "--smoke", filepath.Join("testdata", "check", "miniclusters.yaml")}, "--smoke runs one MiniCluster, and the files hold 2"},
	} {
		_, errOut, err := runCmd(t, "", tc.args...)
		if err == nil || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: err %v, stderr %q, want %q", tc.args, err, errOut, tc.want)
		}
	}
}

// succeededCluster is a SmokeAPI whose MiniCluster succeeds at once.
type succeededCluster struct{ objects map[string]bool }

func (c *succeededCluster) Create(_ context.Context, _ string, o generators.Object) error {
	c.objects[o.GetName()] = true
	return nil
}

func (c *succeededCluster) Delete(_ context.Context, _ string, o generators.Object) error {
	delete(c.objects, o.GetName())
	return nil
}

func (c *succeededCluster) Exists(_ context.Context, _ string, o generators.Object) (bool, error) {
	return c.objects[o.GetName()], nil
}

func (c *succeededCluster) Read(_ context.Context, name string) (*status.Objects, []status.MiniCluster, error) {
	if len(c.objects) == 0 {
		return &status.Objects{}, nil, nil
	}
	return &status.Objects{}, []status.MiniCluster{{Name: name, Phase: status.PhaseSucceeded, Certificate: status.CertificatePresent,
		Size: 2, Joined: 2, KeygenJob: name + "-keygen", BrokerJob: name + "-broker"}}, nil
}

// TestCheckSmoke: check --smoke prints each step as it ends on stderr, adds the steps to the
// results, and leaves nothing behind.
func TestCheckSmoke(t *testing.T) {
	useCheckFixture(t, "cluster.yaml")
	cluster := &succeededCluster{objects: map[string]bool{}}
	old := connectSmoke
	t.Cleanup(func() { connectSmoke = old })
	var namespace string
	connectSmoke = func(_ status.Connection, ns string) (check.SmokeAPI, error) {
		namespace = ns
		return cluster, nil
	}
	out, errOut, err := runCmd(t, "", "check", "-n", "hpc", "--smoke")
	if err != nil {
		t.Fatalf("check --smoke: %v\n%s", err, errOut)
	}
	if namespace != "hpc" {
		t.Errorf("smoke ran in namespace %q, want hpc", namespace)
	}
	for _, step := range []string{check.SmokeCreate, check.SmokeKeygen, check.SmokePull, check.SmokeJoin, check.SmokeCommand, check.SmokeDelete} {
		if !strings.Contains(errOut, "smoke: Passed "+step+": ") {
			t.Errorf("stderr lacks step %s:\n%s", step, errOut)
		}
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(line string) bool {
			f := strings.Fields(line)
			return len(f) > 1 && f[0] == "Passed" && f[1] == step
		}) {
			t.Errorf("the results lack step %s passed:\n%s", step, out)
		}
	}
	if len(cluster.objects) != 0 {
		t.Errorf("left behind: %v", cluster.objects)
	}
}
