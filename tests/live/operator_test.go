package live

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// operatorDefaultView is the flux view image the operator uses when spec.flux.container.image is
// not set (its CRD's default), which the stand-in replaces on the operator's side as on ours.
const operatorDefaultView = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"

// TestOperatorLive runs the same MiniClusters through the Flux Framework operator and through
// minicluster-fn, side by side on the live cluster: the operator's manager as a host process (built
// from ../shared/vendor with its real keygen, with the RBAC of its own config/), given the
// MiniCluster in one namespace; our render of it applied in another. Both sides get the same
// stand-in images (standIn: on the operator's side in the MiniCluster, on ours in the output).
// It compares the end states: the Job completed or kept running, the ranks that joined, each
// rank's output, and the objects that exist, by role. One row per MiniCluster: same, better (with
// why), or different, which fails the test.
func TestOperatorLive(t *testing.T) {
	requireImages(t)
	needOperator(t)
	cases := []struct{ name, file string }{
		{"hello-world", "examples/hello-world/minicluster.yaml"},
		{"batch", "examples/batch/minicluster.yaml"},
		{"persistent", "tests/live/testdata/interactive.yaml"},
	}
	rows := make([]string, len(cases))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outcome := "FAILED (the test's log has the reason)"
			defer func() { rows[i] = outcome }()
			outcome = sideBySide(t, c.name, filepath.Join(suite.repo, c.file))
		})
	}
	var table strings.Builder
	table.WriteString("| MiniCluster | file | outcome |\n|---|---|---|\n")
	for i, c := range cases {
		fmt.Fprintf(&table, "| %s | %s | %s |\n", c.name, c.file, rows[i])
	}
	t.Logf("the operator and minicluster-fn side by side:\n%s", table.String())
}

// sideBySide applies one MiniCluster both ways, waits for both end states and compares them.
func sideBySide(t *testing.T, name, file string) string {
	mc, spec := operatorMiniCluster(t, file)
	instance, _ := mc["metadata"].(map[string]any)["name"].(string)
	size := 1
	if n, ok := spec["size"].(float64); ok {
		size = int(n)
	}
	interactive, _ := spec["interactive"].(bool)

	// Both sides at once, as a user would see them on one node.
	opNS, ourNS := namespace(t, "op-"+name), namespace(t, "ours-"+name)
	manifest, err := json.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	apply(t, manifest, "-n", opNS)
	rendered, err := run(filepath.Dir(file), suite.fn, "render", file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rendered.yaml"), rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	overlayIn(t, dir, ourNS, rendered, "rendered.yaml")
	apply(t, kustomizeBuild(t, dir))

	// The operator names the broker Job after the MiniCluster; ours is <name>-<hash>.
	opJob := operatorJob(t, opNS, instance)
	ourJob := brokerJob(t, ourNS, instance).Metadata.Name
	var end string
	// Rules of docs/differences-from-operator.md that explain a difference of the logs.
	logRules := map[string]bool{}
	if interactive {
		for _, side := range []struct{ ns, job string }{{opNS, opJob}, {ourNS, ourJob}} {
			ranksReachable(t, side.ns, side.job, size, runningLimit)
			if j := getJob(t, side.ns, side.job); j.Status.Succeeded+j.Status.Failed != 0 {
				t.Errorf("%s: the persistent cluster's Job %s ended", side.ns, side.job)
			}
		}
		end = fmt.Sprintf("both running, %d ranks reachable from rank 0", size)
	} else {
		jobComplete(t, opNS, opJob, completeLimit)
		jobComplete(t, ourNS, ourJob, completeLimit)
		checkAllExitedZero(t, opNS, opJob, size)
		checkAllExitedZero(t, ourNS, ourJob, size)
		logging, _ := spec["logging"].(map[string]any)
		quiet, _ := logging["quiet"].(bool)
		for i := range size {
			index := fmt.Sprint(i)
			opLog := normalizeLog(brokerLog(t, opNS, jobPod(t, opNS, opJob, index)), opJob)
			ourLog := normalizeLog(brokerLog(t, ourNS, jobPod(t, ourNS, ourJob, index)), ourJob)
			// D-quiet-workers: the operator's worker ranks print their flux start line even with
			// logging.quiet; ours are quiet on every rank.
			if quiet && i > 0 {
				if kept := workerStartLine.ReplaceAllString(opLog, ""); kept != opLog {
					opLog = strings.TrimSpace(kept)
					logRules["D-quiet-workers"] = true
				}
			}
			if opLog != ourLog {
				t.Errorf("rank %s's output differs:\noperator:\n%s\nours:\n%s", index, opLog, ourLog)
			}
		}
		end = fmt.Sprintf("both Jobs complete %d/%d, each rank's output the same", size, size)
	}
	t.Logf("%s: end states reached %.1fs after the apply", name, time.Since(start).Seconds())

	opRoles, ourRoles := objectRoles(t, opNS, opJob), objectRoles(t, ourNS, ourJob)
	t.Logf("objects by role: operator %q; ours %q", opRoles, ourRoles)
	why := rolesCompared(t, opRoles, ourRoles, logRules)
	if t.Failed() {
		return "different (the test's log has the reason)"
	}
	if len(why) == 0 {
		return "same: " + end
	}
	return "better: " + end + "; " + strings.Join(why, "; ")
}

// operatorMiniCluster is the MiniCluster as the operator gets it: the file as JSON (the API
// server's view of it), with every image the stand-in that replaces it on our side.
func operatorMiniCluster(t *testing.T, file string) (mc, spec map[string]any) {
	t.Helper()
	out := mustKube(t, nil, "create", "--dry-run=client", "-o", "json", "-f", file)
	if err := json.Unmarshal([]byte(out), &mc); err != nil {
		t.Fatalf("%s as JSON: %v", file, err)
	}
	// kubectl's client-side dry run fills in its default namespace; apply -n gives the real one.
	delete(mc["metadata"].(map[string]any), "namespace")
	spec, _ = mc["spec"].(map[string]any)
	containers, _ := spec["containers"].([]any)
	for _, c := range containers {
		c := c.(map[string]any)
		c["image"] = standIn(fmt.Sprint(c["image"]))
	}
	flux, ok := spec["flux"].(map[string]any)
	if !ok {
		flux = map[string]any{}
		spec["flux"] = flux
	}
	view, ok := flux["container"].(map[string]any)
	if !ok {
		view = map[string]any{}
		flux["container"] = view
	}
	image, _ := view["image"].(string)
	if image == "" {
		image = operatorDefaultView
	}
	view["image"] = standIn(image)
	return mc, spec
}

// operatorJob waits for the operator's broker Job (named after the MiniCluster) and returns its name.
func operatorJob(t *testing.T, ns, instance string) string {
	t.Helper()
	waitFor(t, "the operator's Job "+instance, time.Minute, func() (bool, string, error) {
		var j job
		err := getObject(&j, ns, "jobs", instance)
		if err == errNotFound {
			return false, "", nil
		}
		return err == nil, "", err
	})
	return instance
}

func getJob(t *testing.T, ns, name string) job {
	t.Helper()
	var j job
	if err := getObject(&j, ns, "jobs", name); err != nil {
		t.Fatal(err)
	}
	return j
}

// workerStartLine is the line the operator's worker ranks print before flux start.
var workerStartLine = regexp.MustCompile(`(?m)^🌀 flux start .*$`)

// normalizeLog: a rank's log with the broker Job's name (in the pods' hostnames) replaced.
func normalizeLog(log, jobName string) string {
	return strings.TrimSpace(strings.ReplaceAll(log, jobName, "<job>"))
}

// objectRoles names what exists in the namespace by role, not by name: the broker Job, the
// headless Service, the entrypoint ConfigMap the broker pods mount, the certificate (ConfigMap
// or Secret), and anything else by its component label or kind.
func objectRoles(t *testing.T, ns, brokerJobName string) []string {
	t.Helper()
	var roles []string
	type item struct {
		Kind     string         `json:"kind"`
		Metadata objectMeta     `json:"metadata"`
		Type     string         `json:"type"`
		Data     map[string]any `json:"data"`
		Spec     map[string]any `json:"spec"`
	}
	var list struct {
		Items []item `json:"items"`
	}
	out := mustKube(t, nil, "-n", ns, "get", "jobs,services,configmaps,secrets,serviceaccounts,roles,rolebindings,pods", "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Items {
		component := o.Metadata.Labels[labelComponent]
		switch {
		case o.Kind == "ConfigMap" && o.Metadata.Name == "kube-root-ca.crt",
			o.Kind == "ServiceAccount" && o.Metadata.Name == "default":
			// Every namespace has them.
		case o.Kind == "Pod":
			if o.Metadata.Labels["batch.kubernetes.io/job-name"] == brokerJobName {
				roles = append(roles, "broker Pod")
			} else if component != "" {
				roles = append(roles, component+" Pod")
			} else {
				roles = append(roles, "Pod "+o.Metadata.Name)
			}
		case o.Kind == "Job" && o.Metadata.Name == brokerJobName:
			roles = append(roles, "broker Job")
		case o.Kind == "Service" && o.Spec["clusterIP"] == "None":
			roles = append(roles, "headless Service")
		case o.Kind == "ConfigMap" || o.Kind == "Secret" && o.Data["curve.cert"] != nil:
			// One object may have both roles: the operator's entrypoint ConfigMap also holds the
			// certificate.
			var these []string
			if o.Data["curve.cert"] != nil {
				these = append(these, "certificate "+o.Kind)
			}
			if len(o.Data) > len(these) && mountedByBrokers(t, ns, brokerJobName, o.Metadata.Name) {
				these = append(these, "entrypoint ConfigMap")
			}
			if len(these) == 0 {
				these = append(these, o.Kind+" "+o.Metadata.Name)
			}
			roles = append(roles, these...)
		case component != "":
			roles = append(roles, component+" "+o.Kind)
		default:
			roles = append(roles, o.Kind+" "+o.Metadata.Name)
		}
	}
	// A role may have several objects (the pods): one entry each.
	slices.Sort(roles)
	return roles
}

// mountedByBrokers: the broker Job's pod template mounts the ConfigMap.
func mountedByBrokers(t *testing.T, ns, jobName, configMap string) bool {
	t.Helper()
	out := mustKube(t, nil, "-n", ns, "get", "job", jobName, "-o", "jsonpath={.spec.template.spec.volumes[*].configMap.name}")
	return slices.Contains(strings.Fields(out), configMap)
}

// ourBetterObjects are the roles only our side has, or has instead of the operator's, each with
// the rule of docs/differences-from-operator.md that says why.
var ourBetterObjects = map[string]string{
	"keygen Job":            "D-keygen",
	"keygen Pod":            "D-keygen",
	"keygen ServiceAccount": "D-keygen",
	"keygen Role":           "D-keygen",
	"keygen RoleBinding":    "D-keygen",
	"certificate Secret":    "D-curve-secret",
}

// operatorOnlyObjects are the roles only the operator's side has that ours replaces on purpose.
var operatorOnlyObjects = map[string]string{
	"certificate ConfigMap": "D-curve-secret",
}

// rolesCompared compares the roles of both sides: a difference that a rule explains is added to
// rules; any other fails the test. It returns the rules, each checked to be in
// docs/differences-from-operator.md: why ours is better.
func rolesCompared(t *testing.T, op, ours []string, rules map[string]bool) []string {
	t.Helper()
	count := func(roles []string) map[string]int {
		m := map[string]int{}
		for _, r := range roles {
			m[r]++
		}
		return m
	}
	opN, ourN := count(op), count(ours)
	for role, n := range ourN {
		if opN[role] == n {
			continue
		}
		if rule, ok := ourBetterObjects[role]; ok && opN[role] == 0 {
			rules[rule] = true
			continue
		}
		t.Errorf("objects: %d %q on our side, %d on the operator's", n, role, opN[role])
	}
	for role, n := range opN {
		if ourN[role] != 0 {
			continue
		}
		if rule, ok := operatorOnlyObjects[role]; ok {
			rules[rule] = true
			continue
		}
		t.Errorf("objects: %d %q on the operator's side, none on ours", n, role)
	}
	docs, err := os.ReadFile(filepath.Join(suite.repo, "docs", "differences-from-operator.md"))
	if err != nil {
		t.Fatal(err)
	}
	var why []string
	for _, rule := range slices.Sorted(maps.Keys(rules)) {
		if !strings.Contains(string(docs), "`"+rule+"`") {
			t.Errorf("rule %s is not in docs/differences-from-operator.md", rule)
		}
		why = append(why, rule)
	}
	return why
}
