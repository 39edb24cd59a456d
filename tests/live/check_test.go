package live

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkRow is one result of check -o json (the fields these tests read).
type checkRow struct {
	Check   string `json:"check"`
	Scope   string `json:"scope"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// checkJSON runs check -o json -n ns on a MiniCluster file written from doc ("" for none), with
// kubeconfig ("" for the admin's), and returns the results by check name and whether it exited 0.
func checkJSON(t *testing.T, ns, kubeconfig, doc string) (map[string]checkRow, bool) {
	t.Helper()
	args := []string{"check", "-o", "json", "-n", ns}
	if doc != "" {
		file := filepath.Join(t.TempDir(), "minicluster.yaml")
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, file)
	}
	if kubeconfig != "" {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	out, errOut, err := fnCluster(args...)
	var report struct {
		Kind    string     `json:"kind"`
		Results []checkRow `json:"results"`
	}
	if jerr := json.Unmarshal([]byte(out), &report); jerr != nil || report.Kind != "MiniClusterCheck" {
		t.Fatalf("check %v: %v, -o json does not parse: %v\n%s\n%s", args, err, jerr, out, errOut)
	}
	rows := map[string]checkRow{}
	for _, r := range report.Results {
		// The MiniCluster's row of a check wins over the namespace's of the same name.
		if _, seen := rows[r.Check]; !seen || strings.HasPrefix(r.Scope, "MiniCluster ") {
			rows[r.Check] = r
		}
	}
	return rows, err == nil
}

// checkMiniCluster is a MiniCluster of size 2 named checked, with spec lines added to its
// container (indented for it).
func checkMiniCluster(containerLines string) string {
	return "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: checked}\nspec:\n  size: 2\n" +
		"  containers:\n    - image: ubuntu:noble\n      command: hostname\n" + containerLines
}

// TestCheckLive: check on the project's cluster, for each case the issue names, in a namespace of
// its own: everything passes for a MiniCluster that fits; brokers that ask for more CPU than any
// node has, a claim that does not exist, a namespace that enforces Pod Security restricted, a
// ResourceQuota too small, and a user who may only view the namespace each fail the check they
// concern, with the cause in the message.
func TestCheckLive(t *testing.T) {
	t.Parallel()
	requireCluster(t)
	for _, tc := range []struct {
		name string
		// setUp prepares the namespace; it returns the kubeconfig to check with ("" for the admin's).
		setUp func(t *testing.T, ns string) string
		doc   string
		// want are the checks and their statuses; message, text the named check's message holds.
		want           map[string]string
		named, message string
	}{
		{name: "fits", doc: checkMiniCluster("      resources: {requests: {cpu: 100m, memory: 64Mi}}\n"),
			want: map[string]string{"indexed-job": "Passed", "pod-failure-policy": "Passed", "pod-replacement-policy": "Passed", "cluster-dns": "Passed",
				"nodes": "Passed", "namespace": "Passed", "pod-security": "Passed", "resource-quota": "Passed", "access": "Passed", "broker-fit": "Passed"}},
		{name: "cpu", doc: checkMiniCluster("      resources: {requests: {cpu: \"64\"}}\n"),
			want: map[string]string{"broker-fit": "Failed"}, named: "broker-fit", message: "cpu"},
		{name: "claim", doc: checkMiniCluster("      volumes:\n        data: {claimName: no-such-claim, path: /data}\n"),
			want: map[string]string{"claim": "Failed"}, named: "claim", message: "no-such-claim"},
		{name: "restricted", setUp: func(t *testing.T, ns string) string {
			mustKube(t, nil, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
			return ""
		}, doc: checkMiniCluster(""), want: map[string]string{"pod-security": "Failed"}, named: "pod-security", message: "restricted"},
		{name: "quota", setUp: func(t *testing.T, ns string) string {
			mustKube(t, nil, "-n", ns, "create", "quota", "small", "--hard=pods=1")
			return ""
		}, doc: checkMiniCluster(""), want: map[string]string{"resource-quota": "Failed"}, named: "resource-quota", message: "small"},
		{name: "view only", setUp: func(t *testing.T, ns string) string {
			kubeconfig := viewerKubeconfig(t, ns)
			mustKube(t, nil, "-n", ns, "create", "rolebinding", "viewer", "--clusterrole=view", "--serviceaccount="+ns+":viewer")
			return kubeconfig
		}, doc: checkMiniCluster(""), want: map[string]string{"access": "Failed", "nodes": "Unknown"}, named: "access", message: "create"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, "check-"+strings.ReplaceAll(tc.name, " ", "-"))
			kubeconfig := ""
			if tc.setUp != nil {
				kubeconfig = tc.setUp(t, ns)
			}
			rows, passed := checkJSON(t, ns, kubeconfig, tc.doc)
			for check, want := range tc.want {
				if rows[check].Status != want {
					t.Errorf("%s: %+v, want %s", check, rows[check], want)
				}
			}
			if failing := tc.named != ""; passed == failing {
				t.Errorf("check exited 0: %v, want %v", passed, !failing)
			}
			if tc.named != "" && !strings.Contains(rows[tc.named].Message, tc.message) {
				t.Errorf("%s's message does not name %q: %s", tc.named, tc.message, rows[tc.named].Message)
			}
			if tc.named != "" && rows[tc.named].Fix == "" && rows[tc.named].Status == "Failed" {
				t.Errorf("%s failed without a fix", tc.named)
			}
			t.Logf("%s: %s", tc.named, fmt.Sprint(rows[tc.named]))
		})
	}
}

// leftInNamespace lists what of a MiniCluster's kinds is in ns, but for what every namespace has
// (the default ServiceAccount, the root CA ConfigMap).
func leftInNamespace(t *testing.T, ns string) []string {
	t.Helper()
	out := mustKube(t, nil, "-n", ns, "get", "jobs,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings",
		"-o", "name")
	var left []string
	for _, line := range strings.Fields(out) {
		if line == "serviceaccount/default" || line == "configmap/kube-root-ca.crt" {
			continue
		}
		left = append(left, line)
	}
	return left
}

// smokeLine is the line of check's results for step, "" if none.
func smokeLine(out, step string) string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == step {
			return line
		}
	}
	return ""
}

// TestCheckSmokeLive: check --smoke runs a MiniCluster of size 2 end to end on the project's
// cluster with the stand-in images, prints every step, and leaves the namespace as it found it; with
// an image that cannot be pulled, the pull step fails naming it, and still nothing is left.
func TestCheckSmokeLive(t *testing.T) {
	t.Parallel()
	requireImages(t)
	steps := []string{"smoke-create", "smoke-keygen", "smoke-pull", "smoke-join", "smoke-command", "smoke-delete"}

	t.Run("passes", func(t *testing.T) {
		t.Parallel()
		takeSlot(t)
		ns := namespace(t, "check-smoke")
		start := time.Now()
		out, errOut, err := fnCluster("check", "-n", ns, "--smoke", "--image", suite.images.app, "--view-image", suite.images.view, "--timeout", "4m")
		if err != nil {
			t.Fatalf("check --smoke: %v\n%s\n%s", err, out, errOut)
		}
		for _, step := range steps {
			if line := smokeLine(out, step); !strings.HasPrefix(line, "Passed") {
				t.Errorf("step %s: %q, want Passed\n%s", step, line, out)
			}
			if !strings.Contains(errOut, "smoke: Passed "+step+": ") {
				t.Errorf("step %s was not reported as it ended:\n%s", step, errOut)
			}
		}
		if left := leftInNamespace(t, ns); len(left) > 0 {
			t.Errorf("check --smoke left %v in namespace %s", left, ns)
		}
		t.Logf("check --smoke passed in %.1f s:\n%s", time.Since(start).Seconds(), errOut)
	})

	t.Run("image cannot be pulled", func(t *testing.T) {
		t.Parallel()
		takeSlot(t)
		ns := namespace(t, "check-smoke-pull")
		const image = "registry.invalid/minicluster-fn/no-such-app:1"
		out, errOut, err := fnCluster("check", "-n", ns, "--smoke", "--image", image, "--view-image", suite.images.view, "--timeout", "4m")
		if err == nil {
			t.Fatalf("check --smoke with an image that cannot be pulled passed:\n%s", out)
		}
		pull := smokeLine(out, "smoke-pull")
		if !strings.HasPrefix(pull, "Failed") || !strings.Contains(pull, image) {
			t.Errorf("the pull step does not fail naming %s: %q\n%s\n%s", image, pull, out, errOut)
		}
		for _, step := range []string{"smoke-join", "smoke-command"} {
			if line := smokeLine(out, step); !strings.HasPrefix(line, "Unknown") {
				t.Errorf("step %s after the failed pull: %q, want Unknown", step, line)
			}
		}
		if line := smokeLine(out, "smoke-delete"); !strings.HasPrefix(line, "Passed") {
			t.Errorf("delete: %q", line)
		}
		if left := leftInNamespace(t, ns); len(left) > 0 {
			t.Errorf("check --smoke left %v in namespace %s", left, ns)
		}
		t.Logf("check --smoke with %s:\n%s", image, errOut)
	})
}
