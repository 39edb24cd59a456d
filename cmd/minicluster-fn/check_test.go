package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minicluster-fn/minicluster-fn/internal/check"
	"github.com/minicluster-fn/minicluster-fn/internal/check/checktest"
	"github.com/minicluster-fn/minicluster-fn/internal/status"
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
