package live

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNodeLoss powers off the node of a worker of a persistent MiniCluster of size 3 spread over
// three nodes (tests/cluster/node.sh stop: its kubelet, containerd and pod processes killed at
// once, its traffic dropped), as a machine that loses power, and follows what a user sees until
// the MiniCluster is whole again, then powers the node on:
//   - status: Degraded, naming the node that stopped answering, once the node lifecycle controller
//     marks the pod not ready (the cluster's node-lifecycle settings: tests/cluster/env.sh);
//   - the pod is evicted after its toleration; the Job (no pod failure policy: a persistent
//     cluster) makes a new pod of the rank on a node that answers, while the old one stays
//     Terminating on the dead node, StuckTerminating in status --brokers;
//   - the new broker joins: rank 0 reaches every rank, status Ready 3/3;
//   - the node back, the old pod goes and the cluster stays whole.
//
// Each step's time from the power-off is logged and recorded in the phase report.
func TestNodeLoss(t *testing.T) {
	t.Parallel()
	requireImages(t)
	needNodes(t, 3)
	takeSlotAhead(t)
	const instance = "persistent"
	ns := namespace(t, "node-loss")
	dir := fnDir(t, "interactive")
	tolerateTestNodes(t, dir)
	setCommand(t, dir, "size: 2", "size: 3")
	apply(t, renderKustomize(t, ns, dir))
	brokersReady(t, ns, instance, 3, runningLimit)
	jobName := brokerJob(t, ns, instance).Metadata.Name
	ranksReachable(t, ns, jobName, 3, rejoinLimit)
	lost := powerOffWorker(t, ns, instance, jobName, "node loss")
	victim, node, rank, step := lost.victim, lost.node, lost.victim.index(), lost.step

	// What status says while the node is silent, before its pods are evicted.
	_, row := phaseSequence(t, ns, instance, 2*time.Minute, func(r statusRow) bool {
		return r.Phase == "Degraded" && strings.Contains(r.Reason, "node "+node+" stopped answering")
	})
	step("status Degraded, naming the node")
	t.Logf("status reason: %s", row.Reason)
	if !slices.Contains(row.Nodes, node) {
		t.Errorf("status's nodes %v lack %s", row.Nodes, node)
	}
	if b, ok := row.broker(rank, victim.Metadata.Name); !ok || b.State != "NodeLost" || b.Node != node {
		t.Errorf("status --brokers for rank %s: %+v (found %v), want pod %s NodeLost on %s", rank, b, ok, victim.Metadata.Name, node)
	}

	// Evicted after the toleration; a new pod of the rank on a node that answers, which joins.
	var replacement pod
	waitFor(t, "a new pod of rank "+rank+" running on another node", 3*time.Minute, func() (bool, string, error) {
		for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+jobName) {
			if p.index() == rank && p.Metadata.UID != victim.Metadata.UID && p.Status.Phase == "Running" {
				replacement = p
				return true, "", nil
			}
		}
		return false, podsState(t, ns, selector(instance, "broker")), nil
	})
	step("new pod of the rank running")
	if replacement.Spec.NodeName == node {
		t.Errorf("the new pod %s runs on the dead node %s", replacement.Metadata.Name, node)
	}
	ranksReachable(t, ns, jobName, 3, rejoinLimit)
	step("whole again: rank 0 reaches every rank")
	_, row = phaseSequence(t, ns, instance, time.Minute, func(r statusRow) bool { return r.Phase == "Ready" })
	step("status Ready")
	checkRowTruth(t, ns, instance, row)
	if b, ok := row.broker(rank, victim.Metadata.Name); !ok || b.State != "StuckTerminating" {
		t.Errorf("status --brokers for the old pod of rank %s: %+v (found %v), want StuckTerminating while its node is off", rank, b, ok)
	}
	out, errOut, err := fnCluster("status", "-n", ns, instance, "--brokers")
	t.Logf("status --brokers:\n%s%s%v", out, errOut, errOrEmpty(err))

	// The node back: its kubelet finishes the old pod, and nothing else changes.
	lost.powerOn()
	back := time.Now()
	gone(t, ns, "pods", victim.Metadata.Name, 2*time.Minute)
	t.Logf("the old pod gone %.1fs after the node was back", time.Since(back).Seconds())
	ranksReachable(t, ns, jobName, 3, rejoinLimit)
	if row, _ := miniClusterStatus(t, ns, instance); row.Phase != "Ready" {
		t.Errorf("after the node came back: status %s (%s), want Ready", row.Phase, row.Reason)
	}
	logFlux(t, ns, instance, "after the node came back")
}

// TestNodeLossRank0 (make test-all) powers off the node of rank 0, the main broker, of a
// persistent MiniCluster of size 3 kept on three added nodes, and never powers it on again: once the
// MiniCluster is whole, the Node is deleted, as an administrator does with a machine that is gone.
// What a user sees: status Degraded naming the node; a new pod of rank 0 on a node that answers
// once the old one is evicted; the workers, whose main broker is gone, join the new one; every
// rank reachable and status Ready; the old pod, stuck on the dead node until then, gone once its
// Node is deleted. Each step's time from the power-off is logged and recorded.
func TestNodeLossRank0(t *testing.T) {
	exhaustive(t, "rank 0's node lost under a persistent MiniCluster")
	t.Parallel()
	requireImages(t)
	needNodes(t, 4)
	takeSlotAhead(t)
	const instance = "persistent"
	ns := namespace(t, "node-loss-rank0")
	dir := fnDir(t, "interactive")
	onTestNodes(t, dir, true)
	setCommand(t, dir, "size: 2", "size: 3")
	apply(t, renderKustomize(t, ns, dir))
	brokersReady(t, ns, instance, 3, runningLimit)
	jobName := brokerJob(t, ns, instance).Metadata.Name
	ranksReachable(t, ns, jobName, 3, rejoinLimit)
	lost := powerOffRank(t, ns, instance, jobName, "rank 0's node lost", "0")
	victim, node, step := lost.victim, lost.node, lost.step

	_, row := phaseSequence(t, ns, instance, 2*time.Minute, func(r statusRow) bool {
		return r.Phase == "Degraded" && strings.Contains(r.Reason, "node "+node+" stopped answering")
	})
	step("status Degraded, naming the node")
	t.Logf("status reason: %s", row.Reason)

	var replacement pod
	waitFor(t, "a new pod of rank 0 running on another node", 3*time.Minute, func() (bool, string, error) {
		for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+jobName) {
			if p.index() == "0" && p.Metadata.UID != victim.Metadata.UID && p.Status.Phase == "Running" {
				replacement = p
				return true, "", nil
			}
		}
		return false, podsState(t, ns, selector(instance, "broker")), nil
	})
	step("new pod of rank 0 running")
	if replacement.Spec.NodeName == node {
		t.Errorf("the new pod %s runs on the dead node %s", replacement.Metadata.Name, node)
	}
	// Until the new main broker runs (its pod Ready once every worker is online), the workers,
	// whose pods stay Ready from their first join, have not joined it: status must not count them.
	if row, _ := miniClusterStatus(t, ns, instance); func() bool { b, ok := row.broker("0", replacement.Metadata.Name); return ok && b.State == "NotJoined" }() {
		for _, b := range row.Brokers {
			if b.Rank != 0 && b.State != "Rejoining" {
				t.Errorf("status --brokers while the new rank 0 has not joined: rank %d (pod %s) %s, want Rejoining", b.Rank, b.Pod, b.State)
			}
		}
		if row.Joined != 0 {
			t.Errorf("status counts %d brokers joined while the new rank 0 has not joined, want 0", row.Joined)
		}
		t.Logf("status while the new rank 0 waits: %s %d/%d: %s", row.Phase, row.Joined, row.Size, row.Reason)
	}
	ranksReachable(t, ns, jobName, 3, 3*time.Minute)
	step("whole again: the new rank 0 reaches every rank")
	_, row = phaseSequence(t, ns, instance, time.Minute, func(r statusRow) bool { return r.Phase == "Ready" })
	step("status Ready")
	checkRowTruth(t, ns, instance, row)
	out, errOut, err := fnCluster("status", "-n", ns, instance, "--brokers")
	t.Logf("status --brokers:\n%s%s%v", out, errOut, errOrEmpty(err))

	// The machine never comes back: its Node is deleted.
	mustKube(t, nil, "delete", "node", node)
	deleted := time.Now()
	gone(t, ns, "pods", victim.Metadata.Name, 2*time.Minute)
	t.Logf("the old pod gone %.1fs after its Node was deleted", time.Since(deleted).Seconds())
	step("old pod gone after its Node was deleted")
	ranksReachable(t, ns, jobName, 3, rejoinLimit)
	if row, _ := miniClusterStatus(t, ns, instance); row.Phase != "Ready" {
		t.Errorf("after the Node was deleted: status %s (%s), want Ready", row.Phase, row.Reason)
	}
	logFlux(t, ns, instance, "after the Node was deleted")
	// For the node tests after this one: the machine on again registers a bare Node.
	lost.powerOn()
	markTestNode(t, node)
}

// lostBroker is a broker whose node powerOffRank powered off.
type lostBroker struct {
	victim pod
	node   string
	// powerOn powers the node on again, once; the test's cleanup calls it otherwise.
	powerOn func()
	// step logs a step's time since the power-off and records it in the phase report.
	step func(what string)
}

// powerOffWorker checks that the broker Job's three brokers run one on each of three nodes, and
// powers off the node of the first worker that node.sh can power off (node 0 holds the control
// plane).
func powerOffWorker(t *testing.T, ns, instance, jobName, phase string) lostBroker {
	t.Helper()
	return powerOffRank(t, ns, instance, jobName, phase, "1", "2")
}

// powerOffRank is powerOffWorker for the first of the ranks whose node node.sh can power off.
func powerOffRank(t *testing.T, ns, instance, jobName, phase string, ranks ...string) lostBroker {
	t.Helper()
	if on := brokerNodes(t, ns, jobName); len(uniq(on)) != 3 {
		t.Fatalf("the 3 brokers run on %v, want one on each of 3 nodes", on)
	}
	added := addedNodes(t)
	var l lostBroker
	for _, r := range ranks {
		if p := rankPod(t, ns, instance, r); slices.Contains(added, p.Spec.NodeName) {
			l.victim, l.node = p, p.Spec.NodeName
			break
		}
	}
	if l.node == "" {
		t.Fatalf("no broker of rank %v runs on an added node (%v)", ranks, added)
	}
	t.Logf("powering off node %s, which runs rank %s (pod %s)", l.node, l.victim.index(), l.victim.Metadata.Name)
	var once sync.Once
	l.powerOn = func() {
		once.Do(func() {
			if err := runScript(filepath.Join(suite.clusterDir, "node.sh"), "start", l.node); err != nil {
				t.Errorf("node.sh start %s: %v", l.node, err)
			}
		})
	}
	// Registered first: a power-off that fails half-way (its kubelet killed, a process left) still
	// gets the node back, for the node tests after this one.
	t.Cleanup(l.powerOn)
	off := time.Now()
	if err := runScript(filepath.Join(suite.clusterDir, "node.sh"), "stop", l.node); err != nil {
		t.Fatalf("node.sh stop %s: %v", l.node, err)
	}
	l.step = func(what string) {
		t.Logf("%.1fs after the power-off: %s", time.Since(off).Seconds(), what)
		recordPhase(phase+": "+what, time.Since(off), "")
	}
	return l
}

// broker is status's line of the pod of the rank (its name "" for any).
func (r statusRow) broker(rank, podName string) (statusBroker, bool) {
	for _, b := range r.Brokers {
		if fmt.Sprint(b.Rank) == rank && (podName == "" || b.Pod == podName) {
			return b, true
		}
	}
	return statusBroker{}, false
}

// addedNodes are the names of the nodes node.sh added, which it can power off and on.
func addedNodes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command(filepath.Join(suite.clusterDir, "node.sh"), "list").Output()
	if err != nil {
		t.Fatalf("node.sh list: %v", err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			names = append(names, f[1])
		}
	}
	return names
}

// TestNodeLossBatch powers off the node of a worker while a batch MiniCluster's command runs on
// every rank (with the default pod failure policy): Flux fails the job on the lost rank, the main
// broker exits with the command's status, and the Job is marked to fail (FailureTarget); it gets
// its Failed condition only once the pod on the dead node has failed, which no kubelet reports.
// status says Failed with the command's reason, the pod stuck on the dead node, and the one command
// that lets Kubernetes fail it; the test then runs that command, as an administrator would, and the
// Job ends Failed.
func TestNodeLossBatch(t *testing.T) {
	exhaustive(t, "a node lost under a batch MiniCluster")
	t.Parallel()
	requireImages(t)
	needNodes(t, 3)
	takeSlotAhead(t)
	const instance = "failed-command"
	ns := namespace(t, "node-loss-batch")
	dir := fnDir(t, instance)
	tolerateTestNodes(t, dir)
	setCommand(t, dir, "size: 2", "size: 3")
	// Long enough never to end by itself within the test; -N3 puts a task on every rank.
	setCommand(t, dir, "command: COMMAND", "command: flux run -N3 -n3 sleep 600")
	apply(t, renderKustomize(t, ns, dir))
	brokersReady(t, ns, instance, 3, runningLimit)
	jobName := brokerJob(t, ns, instance).Metadata.Name
	lost := powerOffWorker(t, ns, instance, jobName, "node loss, batch")
	victim, node, step := lost.victim, lost.node, lost.step
	tainted := false
	// Before the node is powered on again (cleanups run last first).
	t.Cleanup(func() {
		if tainted {
			mustKube(t, nil, "taint", "nodes", node, "node.kubernetes.io/out-of-service-")
		}
	})

	seen, row := phaseSequence(t, ns, instance, 3*time.Minute, func(r statusRow) bool { return r.Phase == "Failed" })
	step("status Failed")
	t.Logf("phases %v; reason: %s", seen, row.Reason)
	command := "kubectl taint nodes " + node + " node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
	for _, want := range []string{"container " + instance + " exited with status", "stuck Terminating on node " + node, command} {
		if !strings.Contains(row.Reason, want) {
			t.Errorf("status's reason lacks %q: %s", want, row.Reason)
		}
	}
	if j := brokerJob(t, ns, instance); func() bool { s, _ := j.condition("Failed"); return s == "True" }() {
		t.Errorf("the Job has its Failed condition while a pod of it is stuck on the dead node: the case this test is about is gone")
	}

	// What the administrator does, as status says.
	args := strings.Fields(strings.TrimPrefix(command, "kubectl "))
	mustKube(t, nil, args...)
	tainted = true
	jobFailed(t, ns, jobName, time.Minute)
	step("Job Failed after the out-of-service taint")
	gone(t, ns, "pods", victim.Metadata.Name, time.Minute)
	if row, _ := miniClusterStatus(t, ns, instance); row.Phase != "Failed" || strings.Contains(row.Reason, "stuck") {
		t.Errorf("after the taint: status %s (%s), want Failed and nothing stuck", row.Phase, row.Reason)
	}
}
