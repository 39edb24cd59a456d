package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// statusRow is what `minicluster-fn status -o json` says of one MiniCluster.
type statusRow struct {
	Name        string `json:"name"`
	Phase       string `json:"phase"`
	Joined      int    `json:"joined"`
	Size        int    `json:"size"`
	MaxSize     int    `json:"maxSize"`
	BrokerJob   string `json:"brokerJob"`
	Certificate string `json:"certificate"`
	ManagedBy   string `json:"managedBy"`
	Reason      string `json:"reason"`
	// Nodes and Brokers: where the brokers run, and each broker pod (status --brokers).
	Nodes   []string       `json:"nodes"`
	Brokers []statusBroker `json:"brokers"`
}

// statusBroker is status's line for one broker pod.
type statusBroker struct {
	Rank     int    `json:"rank"`
	Pod      string `json:"pod"`
	Node     string `json:"node"`
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
}

// statusViewer is set by TestStatusLive for its run: a kubeconfig whose user is the ServiceAccount
// viewer of namespace ns, which viewOnly binds to the view ClusterRole in each namespace it reads
// (the set namespaces).
var statusViewer struct {
	sync.Mutex
	kubeconfig, ns string
	namespaces     map[string]bool
}

// fnCluster runs the binary under test against the live cluster, as a user does: with the viewer's
// kubeconfig in a namespace viewOnly bound to it, with the cluster's admin kubeconfig otherwise
// (the other tests run beside TestStatusLive), unless args name a --kubeconfig.
func fnCluster(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kubeconfig := suite.kubeconfig
	statusViewer.Lock()
	if i := slices.Index(args, "-n"); i >= 0 && i+1 < len(args) && statusViewer.namespaces[args[i+1]] {
		kubeconfig = statusViewer.kubeconfig
	}
	statusViewer.Unlock()
	if !slices.Contains(args, "--kubeconfig") {
		args = append(args, "--kubeconfig", kubeconfig)
	}
	cmd := exec.CommandContext(ctx, suite.fn, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// statusRows are the rows `status -n ns -o json` prints for the MiniClusters named, all of ns
// when none are. It does not fail the test, for the goroutines that sample status.
func statusRows(ns string, names ...string) ([]statusRow, error) {
	out, errOut, err := fnCluster(append([]string{"status", "-n", ns, "-o", "json"}, names...)...)
	if err != nil {
		return nil, fmt.Errorf("minicluster-fn status -n %s %s: %v\n%s", ns, strings.Join(names, " "), err, errOut)
	}
	var list struct {
		Items []statusRow `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("status -o json: %v\n%s", err, out)
	}
	return list.Items, nil
}

// miniClusterStatus is the row status prints for the MiniCluster instance in ns (false when none).
func miniClusterStatus(t testing.TB, ns, instance string) (statusRow, bool) {
	t.Helper()
	rows, err := statusRows(ns, instance)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if row.Name == instance {
			return row, true
		}
	}
	return statusRow{}, false
}

// phaseSequence reads status every second until until(row) holds or limit passes, and
// returns the phases seen, each once, in the order they first appeared, with the last row.
func phaseSequence(t testing.TB, ns, instance string, limit time.Duration, until func(statusRow) bool) ([]string, statusRow) {
	t.Helper()
	var seen []string
	var last statusRow
	// Every second, however long status takes: a phase that lasts seconds must not be missed.
	poll(t, "MiniCluster "+instance+" in namespace "+ns+" to reach the phase awaited", limit, false, func() (bool, string, error) {
		row, ok := miniClusterStatus(t, ns, instance)
		if !ok {
			return false, "no row yet", nil
		}
		last = row
		if len(seen) == 0 || seen[len(seen)-1] != row.Phase {
			seen = append(seen, row.Phase)
		}
		return until(row), fmt.Sprintf("phases %v, reason %q", seen, row.Reason), nil
	})
	return seen, last
}

// inOrder tells whether want appear in got in this order, each at least once, and got has no phase
// outside want.
func inOrder(got, want []string) bool {
	i := 0
	for _, p := range got {
		j := slices.Index(want, p)
		if j < i {
			return false
		}
		i = j
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}

// checkRowTruth compares a row with what kubectl shows: the broker pods that are Ready, the size,
// the broker Job's conditions.
func checkRowTruth(t testing.TB, ns, instance string, row statusRow) {
	t.Helper()
	j := brokerJob(t, ns, instance)
	if row.BrokerJob != j.Metadata.Name || j.Spec.Parallelism == nil || row.Size != *j.Spec.Parallelism {
		t.Errorf("status says broker Job %s of size %d; kubectl shows %s of parallelism %v", row.BrokerJob, row.Size, j.Metadata.Name, j.Spec.Parallelism)
	}
	ready := 0
	for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+j.Metadata.Name) {
		if p.ready() {
			ready++
		}
	}
	complete, _ := j.condition("Complete")
	failed, _ := j.condition("Failed")
	switch {
	case row.Phase == "Succeeded" && complete != "True", row.Phase == "Failed" && failed != "True":
		t.Errorf("status says %s; the Job's conditions: Complete %q, Failed %q", row.Phase, complete, failed)
	case (row.Phase == "Ready" || row.Phase == "Degraded" || row.Phase == "Starting") && row.Joined != ready:
		t.Errorf("status says %d brokers joined (%s); kubectl shows %d broker pods Ready", row.Joined, row.Phase, ready)
	}
}

// TestStatusLive: status follows real MiniClusters through their phases, each row checked
// against what kubectl shows, and wait exits as it says. The scenarios run in parallel, each in a
// namespace of its own.
func TestStatusLive(t *testing.T) {
	t.Parallel()
	requireImages(t)
	useStatusViewer(t)

	t.Run("hello-world", func(t *testing.T) {
		t.Parallel()
		takeSlot(t)
		const instance = "failed-command" // testdata/failed-command.yaml, size 2
		ns := namespace(t, "status-hello")
		viewOnly(t, ns)
		dir := fnDir(t, "failed-command")
		// Long enough to be seen Running.
		setCommand(t, dir, "command: COMMAND", `command: sh -c 'sleep 10; hostname'`)
		apply(t, renderKustomize(t, ns, dir))
		seen, last := phaseSequence(t, ns, instance, completeLimit, func(r statusRow) bool {
			if r.Phase == "Running" {
				checkRowTruth(t, ns, instance, r)
				// Running: rank 0 is Ready (its command runs), or its command is over and the
				// Job completes.
				if p := rankPod(t, ns, instance, "0"); !p.ready() && !p.ended() {
					t.Errorf("status says Running while rank 0's pod %s is not Ready and has not ended", p.Metadata.Name)
				}
			}
			return r.Phase == "Succeeded" || r.Phase == "Failed"
		})
		if want := []string{"WaitingForCertificate", "Starting", "Running", "Succeeded"}; !inOrder(seen, want) {
			t.Errorf("phases seen %v, want %v in this order", seen, want)
		}
		checkRowTruth(t, ns, instance, last)
		if out, errOut, err := fnCluster("wait", "-n", ns, instance, "--for=complete", "--timeout=30s"); err != nil || !strings.Contains(out, "MiniCluster failed-command complete (Succeeded") {
			t.Errorf("wait --for=complete: %v\n%s%s", err, out, errOut)
		}
		t.Logf("phases seen: %v", seen)
	})

	t.Run("persistent", func(t *testing.T) {
		t.Parallel()
		takeSlot(t)
		const instance = "persistent" // testdata/interactive.yaml: size 2, maxSize 4
		ns := namespace(t, "status-persistent")
		viewOnly(t, ns)
		apply(t, renderKustomize(t, ns, fnDir(t, "interactive")))
		if out, errOut, err := fnCluster("wait", "-n", ns, instance, "--for=joined", "--timeout=4m"); err != nil {
			t.Fatalf("wait --for=joined: %v\n%s%s", err, out, errOut)
		}
		row, _ := miniClusterStatus(t, ns, instance)
		if row.Phase != "Ready" || row.Joined != 2 || row.Size != 2 || row.MaxSize != 4 || row.Certificate != "yes" {
			t.Errorf("after wait --for=joined: %+v, want Ready, 2/2 (max 4), certificate yes", row)
		}
		checkRowTruth(t, ns, instance, row)
		if out, err := fluxOnRank0(t, ns, instance, "flux exec -r 0-1 hostname"); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 1 {
			t.Errorf("Ready, but flux exec -r 0-1 hostname (ranks 2 and 3, up to maxSize, are not up): %v\n%s", err, out)
		}
		victim := rankPod(t, ns, instance, "1")
		mustKube(t, nil, "-n", ns, "delete", "pod", victim.Metadata.Name, "--wait=false")
		seen, _ := phaseSequence(t, ns, instance, runningLimit, func(r statusRow) bool { return r.Phase == "Degraded" })
		t.Logf("after deleting %s: %v", victim.Metadata.Name, seen)
		seen, row = phaseSequence(t, ns, instance, runningLimit, func(r statusRow) bool { return r.Phase == "Ready" })
		if !inOrder(seen, []string{"Degraded", "Ready"}) {
			t.Errorf("after the broker pod's deletion, phases %v, want Degraded then Ready", seen)
		}
		checkRowTruth(t, ns, instance, row)
		if out, errOut, err := fnCluster("wait", "-n", ns, instance, "--for=complete", "--timeout=10s"); err == nil || !strings.Contains(errOut, "runs until deleted") {
			t.Errorf("wait --for=complete of a cluster that runs until deleted: %v\n%s%s", err, out, errOut)
		}
	})

	t.Run("failed command", func(t *testing.T) {
		t.Parallel()
		takeSlot(t)
		const instance = "failed-command"
		ns := namespace(t, "status-failed")
		viewOnly(t, ns)
		dir := fnDir(t, "failed-command")
		setCommand(t, dir, "command: COMMAND", `command: sh -c 'echo status-live-marker; exit 3'`)
		apply(t, renderKustomize(t, ns, dir))
		seen, row := phaseSequence(t, ns, instance, completeLimit, func(r statusRow) bool { return r.Phase == "Failed" || r.Phase == "Succeeded" })
		if row.Phase != "Failed" || !inOrder(seen, []string{"WaitingForCertificate", "Starting", "Failed"}) && !inOrder(seen, []string{"WaitingForCertificate", "Starting", "Running", "Failed"}) {
			t.Errorf("phases %v, want WaitingForCertificate, Starting, (Running,) Failed", seen)
		}
		for _, want := range []string{"exited with status 3", "the command failed with exit status 3", "status-live-marker"} {
			if !strings.Contains(row.Reason, want) {
				t.Errorf("reason %q lacks %q", row.Reason, want)
			}
		}
		checkRowTruth(t, ns, instance, row)
		if _, errOut, err := fnCluster("wait", "-n", ns, instance, "--for=complete", "--timeout=30s"); err == nil || !strings.Contains(errOut, "phase Failed") {
			t.Errorf("wait --for=complete of a failed MiniCluster: %v\n%s", err, errOut)
		}
	})

	// Each reason, provoked for real; status must name it. The renders skip the check that every
	// image is one the cluster has, where the case wants one that is not.
	const missing = "localhost/minicluster-fn-live/does-not-exist:1"
	for _, tc := range []struct {
		name, testdata, instance string
		// setup edits the MiniCluster and may create objects in ns before the apply.
		setup func(t *testing.T, ns, dir string)
		phase string
		want  []string
		limit time.Duration
	}{
		{name: "keygen image missing", testdata: "failed-command", instance: "failed-command", phase: "WaitingForCertificate",
			setup: func(t *testing.T, _, dir string) {
				setCommand(t, dir, "command: COMMAND", "command: hostname")
				setCommand(t, dir, "  annotations:\n", "  annotations:\n    minicluster-fn.dev/keygen-image: "+missing+"\n")
			},
			want: []string{"the keygen image " + missing + " cannot be pulled", "container keygen", "build and load the image"}},
		{name: "keygen pod failed", testdata: "failed-command", instance: "failed-command", phase: "WaitingForCertificate",
			setup: func(t *testing.T, _, dir string) {
				// A "view" image without flux, the application's: the keygen script finds no flux
				// keygen in it and exits 1, saying so (docs/generated-objects.md, The keygen Job).
				setCommand(t, dir, "  containers:\n", "  flux:\n    container:\n      image: "+suite.images.app+"\n  containers:\n")
				setCommand(t, dir, "command: COMMAND", "command: hostname")
			},
			want: []string{"keygen pod failed-command-keygen-", "failed (exit status 1)", "has no flux command"}},
		{name: "unschedulable", testdata: "failed-command", instance: "failed-command", phase: "Starting",
			setup: func(t *testing.T, _, dir string) {
				setCommand(t, dir, "      command: COMMAND\n", "      command: hostname\n      resources:\n        requests:\n          cpu: \"1000\"\n")
			},
			want: []string{"cannot be scheduled", "Insufficient cpu"}},
		{name: "claim pending", testdata: "failed-command", instance: "failed-command", phase: "Starting",
			setup: func(t *testing.T, ns, dir string) {
				setCommand(t, dir, "      command: COMMAND\n", "      command: hostname\n      volumes:\n        results: {path: /results, claimName: status-claim}\n")
				mustKube(t, []byte("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: status-claim}\nspec:\n  storageClassName: does-not-exist\n"+
					"  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n"), "-n", ns, "apply", "-f", "-")
			},
			want: []string{"PersistentVolumeClaim status-claim of broker pod", "is Pending"}},
		{name: "quota", testdata: "failed-command", instance: "failed-command", phase: "WaitingForCertificate",
			setup: func(t *testing.T, ns, dir string) {
				// No pod at all: the keygen Job's is the first refused.
				setCommand(t, dir, "command: COMMAND", "command: hostname")
				mustKube(t, []byte("apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: no-pods}\nspec: {hard: {pods: \"0\"}}\n"), "-n", ns, "apply", "-f", "-")
			},
			want: []string{"the Job controller cannot create the pod of the keygen Job failed-command-keygen-", "exceeded quota: no-pods"}},
		{name: "admission", testdata: "failed-command", instance: "failed-command", phase: "Starting",
			setup: func(t *testing.T, ns, dir string) {
				// Pod Security "restricted" admits the keygen pod (it complies) and refuses the
				// broker pods, which the Job controller reports.
				setCommand(t, dir, "command: COMMAND", "command: hostname")
				mustKube(t, nil, "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
			},
			want: []string{"the Job controller cannot create the pods of Job failed-command-", "violates PodSecurity"}},
		{name: "view image missing", testdata: "failed-command", instance: "failed-command", phase: "Starting",
			setup: func(t *testing.T, _, dir string) {
				// The keygen runs the project image, so that only the broker pods need the view.
				setCommand(t, dir, "  containers:\n", "  flux:\n    container:\n      image: "+missing+"\n  containers:\n")
				setCommand(t, dir, "command: COMMAND", "command: hostname")
				setCommand(t, dir, "  annotations:\n", "  annotations:\n    minicluster-fn.dev/keygen-image: "+suite.images.project+"\n")
			},
			want: []string{"the view image " + missing + " cannot be pulled"}},
		{name: "container image missing", testdata: "failed-command", instance: "failed-command", phase: "Starting",
			setup: func(t *testing.T, _, dir string) {
				setCommand(t, dir, "    - image: ubuntu:noble\n      command: COMMAND\n", "    - image: "+missing+"\n      command: hostname\n")
			},
			want: []string{"image " + missing + " cannot be pulled", "container failed-command"}},
		{name: "broker not joined", testdata: "interactive", instance: "persistent", phase: "Starting", limit: 3 * time.Minute,
			// The headless Service selects no pod (see TestReadyMeansJoined): rank 1 cannot find
			// rank 0, and from 30 s on its script reports where it is stuck.
			want: []string{"has not joined:", "has not joined the main broker after", "the instance has not started after"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			takeSlot(t)
			ns := namespace(t, "status-"+strings.ReplaceAll(tc.name, " ", "-"))
			viewOnly(t, ns)
			dir := fnDir(t, tc.testdata)
			if tc.setup != nil {
				tc.setup(t, ns, dir)
			}
			manifests := kustomizeBuild(t, overlay(t, ns, kustomizeBuild(t, dir), dir))
			if tc.name == "broker not joined" {
				const member = `minicluster-fn.dev/subdomain-member: "true"`
				for _, d := range splitDocuments(manifests) {
					if d.kind == "Service" {
						d.text = strings.Replace(d.text, member, `minicluster-fn.dev/subdomain-member: "none"`, 1)
					}
					apply(t, []byte(d.text))
				}
			} else {
				apply(t, manifests)
			}
			limit := tc.limit
			if limit == 0 {
				limit = runningLimit
			}
			_, row := phaseSequence(t, ns, tc.instance, limit, func(r statusRow) bool {
				return r.Phase == tc.phase && strings.Contains(r.Reason, tc.want[0])
			})
			// The join report names either rank: its line is one of the two reports.
			matched := 0
			for _, w := range tc.want {
				if strings.Contains(row.Reason, w) {
					matched++
				}
			}
			if tc.name == "broker not joined" && matched < 2 || tc.name != "broker not joined" && matched != len(tc.want) {
				t.Errorf("status reason %q, want %q", row.Reason, tc.want)
			}
			t.Logf("%s: %s: %s", tc.name, row.Phase, row.Reason)
		})
	}
}

// useStatusViewer makes status and wait run, for the rest of the test, as a ServiceAccount that has
// nothing but the namespace's view role where it looks (viewOnly), with a token the API server
// issued for it: they must need no more, and never read a Secret (issue: least privilege).
func useStatusViewer(t *testing.T) {
	t.Helper()
	ns := namespace(t, "status-viewer")
	kubeconfig := viewerKubeconfig(t, ns)
	statusViewer.Lock()
	statusViewer.kubeconfig, statusViewer.ns, statusViewer.namespaces = kubeconfig, ns, map[string]bool{}
	statusViewer.Unlock()
	t.Cleanup(func() {
		statusViewer.Lock()
		statusViewer.kubeconfig, statusViewer.ns, statusViewer.namespaces = "", "", nil
		statusViewer.Unlock()
	})
}

// viewerKubeconfig writes a kubeconfig of ServiceAccount viewer, created in ns with no rights,
// and returns its path: bindings give it the rights a test wants it to have.
func viewerKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	mustKube(t, nil, "-n", ns, "create", "serviceaccount", "viewer")
	token := strings.TrimSpace(mustKube(t, nil, "-n", ns, "create", "token", "viewer", "--duration=2h"))
	server := mustKube(t, nil, "config", "view", "--raw", "--minify", "--flatten", "-o", "jsonpath={.clusters[0].cluster.server}")
	ca := mustKube(t, nil, "config", "view", "--raw", "--minify", "--flatten", "-o", "jsonpath={.clusters[0].cluster.certificate-authority-data}")
	kubeconfig := filepath.Join(t.TempDir(), "viewer.kubeconfig")
	text := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: live\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n"+
		"users:\n- name: viewer\n  user:\n    token: %s\ncontexts:\n- name: viewer\n  context: {cluster: live, user: viewer}\ncurrent-context: viewer\n", server, ca, token)
	if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := kubeEnv(nil, nil, "--kubeconfig", kubeconfig, "auth", "can-i", "list", "secrets", "-n", ns); err == nil || strings.TrimSpace(out) != "no" {
		t.Fatalf("the viewer may list Secrets (kubectl auth can-i: %q, %v)", out, err)
	}
	return kubeconfig
}

// viewOnly binds the view ClusterRole to the status viewer in namespace ns, and nothing else.
func viewOnly(t *testing.T, ns string) {
	t.Helper()
	statusViewer.Lock()
	viewer := statusViewer.ns
	statusViewer.namespaces[ns] = true
	statusViewer.Unlock()
	mustKube(t, nil, "-n", ns, "create", "rolebinding", "status-viewer", "--clusterrole=view", "--serviceaccount="+viewer+":viewer")
}
