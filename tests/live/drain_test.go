package live

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDrain drains nodes under MiniClusters of two brokers, kept on the added nodes (three of them,
// so that a drained node's broker always has a node without a broker to go to, and the control
// plane's node is never drained), as an administrator does before maintenance (kubectl drain, then
// uncordon):
//   - persistent: the node of the worker drained three times in a row: each time the broker is
//     evicted, a new pod of the rank joins on another node, and the MiniCluster is Ready again; the
//     Job never fails (an eviction counts against backoffLimit, 100 by default);
//   - batch with minicluster-fn.dev/eviction: WaitForCommand: the drain of the worker's node while
//     the command runs waits (its PodDisruptionBudget refuses the eviction) until the command has
//     ended and the pods have completed, then drains the node; the Job completes;
//   - batch without it (make test-all): the drain evicts the worker and the command fails, as
//     with the operator; the Job fails, and status says why.
//
// Each drain's time and the time until the MiniCluster is whole again are logged and recorded in
// the phase report.
func TestDrain(t *testing.T) {
	t.Parallel()
	requireImages(t)
	needNodes(t, 4)
	takeSlotAhead(t)

	t.Run("persistent, three drains", func(t *testing.T) {
		const instance = "persistent"
		ns := namespace(t, "drain")
		dir := fnDir(t, "interactive")
		onTestNodes(t, dir, true)
		apply(t, renderKustomize(t, ns, dir))
		brokersReady(t, ns, instance, 2, runningLimit)
		jobName := brokerJob(t, ns, instance).Metadata.Name
		ranksReachable(t, ns, jobName, 2, rejoinLimit)
		for i := 1; i <= 3; i++ {
			worker, main := rankPod(t, ns, instance, "1"), rankPod(t, ns, instance, "0")
			node := worker.Spec.NodeName
			if node == main.Spec.NodeName {
				t.Fatalf("drain %d: the worker runs beside rank 0 on %s: a drain would evict both", i, node)
			}
			start := time.Now()
			out, took := drain(t, node, 2*time.Minute)
			t.Logf("drain %d: node %s (worker pod %s) drained in %.1fs:\n%s", i, node, worker.Metadata.Name, took.Seconds(), out)
			var replacement pod
			waitFor(t, "a new pod of rank 1 Ready", rejoinLimit, func() (bool, string, error) {
				for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+jobName) {
					if p.index() == "1" && p.Metadata.UID != worker.Metadata.UID && p.ready() && p.Metadata.DeletionTimestamp == nil {
						replacement = p
						return true, "", nil
					}
				}
				return false, podsState(t, ns, selector(instance, "broker")), nil
			})
			if replacement.Spec.NodeName == node {
				t.Errorf("drain %d: the new pod %s runs on the drained node %s", i, replacement.Metadata.Name, node)
			}
			ranksReachable(t, ns, jobName, 2, rejoinLimit)
			_, row := phaseSequence(t, ns, instance, time.Minute, func(r statusRow) bool { return r.Phase == "Ready" })
			checkRowTruth(t, ns, instance, row)
			whole := time.Since(start)
			t.Logf("drain %d: whole again %.1fs after the drain began, the new broker on %s", i, whole.Seconds(), replacement.Spec.NodeName)
			recordPhase(fmt.Sprintf("drain %d of a persistent worker: whole again", i), whole, "")
			mustKube(t, nil, "uncordon", node)
		}
		j := brokerJob(t, ns, instance)
		if s, why := j.condition("Failed"); s == "True" {
			t.Errorf("after three drains the Job failed: %s", why)
		}
		t.Logf("after three drains: the Job has %d failed pods (evictions, against backoffLimit)", j.Status.Failed)
	})

	// A batch MiniCluster of two brokers whose command runs a task on both for long enough to
	// drain while it runs.
	batch := func(t *testing.T, name string, waitForCommand bool) (ns, instance, jobName string, worker pod) {
		t.Helper()
		instance = "failed-command"
		ns = namespace(t, name)
		dir := fnDir(t, instance)
		onTestNodes(t, dir, true)
		setCommand(t, dir, "command: COMMAND", "command: flux run -N2 -n2 sleep 40")
		if waitForCommand {
			setCommand(t, dir, "  annotations:\n", "  annotations:\n    minicluster-fn.dev/eviction: WaitForCommand\n")
		}
		apply(t, renderKustomize(t, ns, dir))
		brokersReady(t, ns, instance, 2, runningLimit)
		jobName = brokerJob(t, ns, instance).Metadata.Name
		worker, main := rankPod(t, ns, instance, "1"), rankPod(t, ns, instance, "0")
		if worker.Spec.NodeName == main.Spec.NodeName {
			t.Fatalf("the worker runs beside rank 0 on %s", worker.Spec.NodeName)
		}
		return ns, instance, jobName, worker
	}

	t.Run("batch, eviction WaitForCommand", func(t *testing.T) {
		ns, instance, jobName, worker := batch(t, "drain-wait", true)
		node := worker.Spec.NodeName
		out, took := drain(t, node, 3*time.Minute)
		t.Logf("node %s (worker pod %s) drained in %.1fs:\n%s", node, worker.Metadata.Name, took.Seconds(), out)
		recordPhase("drain under a batch command with eviction WaitForCommand", took, "")
		mustKube(t, nil, "uncordon", node)
		if !strings.Contains(out, "disruption budget") {
			t.Errorf("kubectl drain never reported the disruption budget refusing the eviction:\n%s", out)
		}
		j := jobComplete(t, ns, jobName, completeLimit)
		if j.Status.Failed != 0 {
			t.Errorf("the Job completed with %d failed pods: a broker was evicted", j.Status.Failed)
		}
		var w pod
		if err := getObject(&w, ns, "pods", worker.Metadata.Name); err == nil {
			t.Errorf("the worker's pod %s is still there after the drain (phase %s)", w.Metadata.Name, w.Status.Phase)
		}
		if row, _ := miniClusterStatus(t, ns, instance); row.Phase != "Succeeded" {
			t.Errorf("after the drain: status %s (%s), want Succeeded", row.Phase, row.Reason)
		}
	})

	t.Run("batch, eviction Allow", func(t *testing.T) {
		exhaustive(t, "a drain under a batch command without the eviction option")
		ns, instance, jobName, worker := batch(t, "drain-allow", false)
		node := worker.Spec.NodeName
		out, took := drain(t, node, 2*time.Minute)
		t.Logf("node %s (worker pod %s) drained in %.1fs:\n%s", node, worker.Metadata.Name, took.Seconds(), out)
		mustKube(t, nil, "uncordon", node)
		jobFailed(t, ns, jobName, completeLimit)
		seen, row := phaseSequence(t, ns, instance, time.Minute, func(r statusRow) bool { return r.Phase == "Failed" })
		t.Logf("status phases %v; reason: %s", seen, row.Reason)
	})
}

// drain runs kubectl drain on node as an administrator does (pods with emptyDir volumes, as the
// broker pods have, go too) and returns its output and how long it took, within limit. The node
// stays cordoned: the caller uncordons it (and the test's cleanup does, whatever happened).
func drain(t *testing.T, node string, limit time.Duration) (string, time.Duration) {
	t.Helper()
	t.Cleanup(func() { _, _ = kube(nil, "uncordon", node) })
	ctx, cancel := context.WithTimeout(context.Background(), limit+30*time.Second)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, suite.kubectl, "--kubeconfig", suite.kubeconfig, "drain", node,
		"--ignore-daemonsets", "--delete-emptydir-data", "--timeout="+limit.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl drain %s: %v\n%s", node, err, out)
	}
	return string(out), time.Since(start)
}
