package live

import (
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

// TestAcrossNodes runs MiniClusters on three nodes: each node a kubelet with its own containerd,
// bridge and pod network (tests/cluster/node.sh), so the brokers find each other by the headless
// Service's DNS names and talk across nodes through the host, as on a cluster of machines. Size 3
// puts one broker on each node (the rendered preferred anti-affinity on the hostname); size 4 on
// three nodes still runs, two brokers sharing a node (with four nodes, where TestDrain added one
// before, sizes 4 and 5). In both, every broker joins, the command runs
// on every rank, Fluxion lists every broker as a node of its own with none down, and the Job
// completes.
func TestAcrossNodes(t *testing.T) {
	t.Parallel()
	requireImages(t)
	nodes := needNodes(t, 3)
	takeSlotAhead(t)
	// Three nodes, or more where another node test added them first.
	n := len(nodes)
	t.Logf("nodes: %v", nodes)
	const instance = "hello-ranks"

	t.Run("one broker a node", func(t *testing.T) {
		dir := fnDir(t, instance)
		tolerateTestNodes(t, dir)
		resizeHelloRanks(t, dir, n)
		ns := namespace(t, "across-n")
		j := checkHelloRanks(t, instance, ns, dir, n)
		on := brokerNodes(t, ns, j.Metadata.Name)
		if distinct := uniq(on); len(distinct) != n {
			t.Errorf("the %d brokers ran on %v, want one on each of %d nodes", n, on, n)
		}
	})
	t.Run("more brokers than nodes", func(t *testing.T) {
		dir := fnDir(t, instance)
		tolerateTestNodes(t, dir)
		resizeHelloRanks(t, dir, n+1)
		ns := namespace(t, "across-more")
		j := checkHelloRanks(t, instance, ns, dir, n+1)
		on := brokerNodes(t, ns, j.Metadata.Name)
		if distinct := uniq(on); len(distinct) != n {
			t.Errorf("the %d brokers ran on %v, want all %d nodes used", n+1, on, n)
		}
	})
}

// brokerNodes: the node each pod of the broker Job ran on, by completion index.
func brokerNodes(t *testing.T, ns, jobName string) []string {
	t.Helper()
	var on []string
	for _, p := range pods(t, ns, "job-name="+jobName) {
		on = append(on, p.index()+"="+p.Spec.NodeName)
	}
	slices.Sort(on)
	t.Logf("brokers (index=node): %v", on)
	return on
}

// uniq: the distinct nodes of brokerNodes' list.
func uniq(on []string) []string {
	var nodes []string
	for _, e := range on {
		_, node, _ := strings.Cut(e, "=")
		if !slices.Contains(nodes, node) {
			nodes = append(nodes, node)
		}
	}
	return nodes
}

// The tests of several nodes (node tests) add nodes, power them off and on: they run one at a time,
// on the nodes that node.sh added, which the first of them adds and the suite removes at its end
// (removeAddedNodes). Every added node carries the taint testNodeTaint, which only the node tests'
// MiniClusters tolerate (tolerateTestNodes): the tests that run beside them never have a pod on a
// node that one of them powers off.
var nodeTests struct {
	sync.Mutex
	added, tainted []string // by needNodes, for removeAddedNodes
}

// testNodeTaint keeps all but the node tests' pods off the added nodes; the label of the same key
// (value "true") lets a node test keep a MiniCluster on them (onTestNodes).
const testNodeTaint = "live.minicluster-fn.dev/node-tests"

// needNodes waits for the node tests before it (holding their turn until t ends), then makes sure
// the cluster has at least n Ready nodes and returns their names. Where it has fewer (the suite's
// cluster has one, unless make cluster-up NODES=N started more), it adds them with
// tests/cluster/node.sh, which imports every image of the first node. Every added node gets the
// taint testNodeTaint.
func needNodes(t *testing.T, n int) []string {
	t.Helper()
	nodeTests.Lock()
	t.Cleanup(nodeTests.Unlock)
	have := readyNodes(t)
	for len(have) < n {
		start := time.Now()
		add := exec.Command(filepath.Join(suite.clusterDir, "node.sh"), "add")
		// Registered with the taint: no other test's pod is ever scheduled there, not even
		// when a test deleted the Node and the kubelet registers it again.
		add.Env = append(os.Environ(), "NODE_TAINT="+testNodeTaint)
		out, err := add.Output()
		if err != nil {
			var stderr string
			if e, ok := err.(*exec.ExitError); ok {
				stderr = string(e.Stderr)
			}
			t.Fatalf("tests/cluster/node.sh add: %v\n%s", err, stderr)
		}
		name := strings.TrimSpace(string(out))
		nodeTests.added = append(nodeTests.added, name)
		t.Logf("node %s added in %.1fs", name, time.Since(start).Seconds())
		recordPhase("node "+name+" added (with its images)", time.Since(start), "")
		have = readyNodes(t)
	}
	for _, name := range addedNodes(t) {
		markTestNode(t, name)
		if !slices.Contains(nodeTests.tainted, name) {
			nodeTests.tainted = append(nodeTests.tainted, name)
		}
	}
	return have
}

// markTestNode puts the taint and label testNodeTaint on an added node: the taint for a node that
// make cluster-up NODES=N added, the label for any (a Node deleted by a test comes back with the
// taint its kubelet registers it with, and without the label).
func markTestNode(t *testing.T, name string) {
	t.Helper()
	mustKube(t, nil, "taint", "nodes", name, testNodeTaint+"=:NoSchedule", "--overwrite")
	mustKube(t, nil, "label", "nodes", name, testNodeTaint+"=true", "--overwrite")
}

// tolerateTestNodes lets the MiniCluster of dir (fnDir) onto the nodes that needNodes added.
func tolerateTestNodes(t *testing.T, dir string) { onTestNodes(t, dir, false) }

// onTestNodes lets the MiniCluster of dir (fnDir) onto the nodes that needNodes added, and with
// only, keeps it there (spec.pod.nodeAffinity on their label): never on the control plane's node.
func onTestNodes(t *testing.T, dir string, only bool) {
	t.Helper()
	pod := "  pod:\n    tolerations:\n      - key: " + testNodeTaint + "\n        operator: Exists\n        effect: NoSchedule\n"
	if only {
		pod += "    nodeAffinity:\n      " + testNodeTaint + ": [\"true\"]\n"
	}
	setCommand(t, dir, "\nspec:\n", "\nspec:\n"+pod)
}

// removeAddedNodes removes the nodes that needNodes added (node.sh remove) and the taint from
// those it found (make cluster-up NODES=N), at the end of the suite. It reports the first failure.
func removeAddedNodes() error {
	var first error
	for _, name := range nodeTests.tainted {
		var err error
		if slices.Contains(nodeTests.added, name) {
			err = runScript(filepath.Join(suite.clusterDir, "node.sh"), "remove", name)
		} else {
			if _, err = kube(nil, "taint", "nodes", name, testNodeTaint+"-"); err == nil {
				_, err = kube(nil, "label", "nodes", name, testNodeTaint+"-")
			}
		}
		if err != nil && first == nil {
			first = fmt.Errorf("node %s: %v", name, err)
		}
	}
	nodeTests.added, nodeTests.tainted = nil, nil
	return first
}

// readyNodes: the names of the cluster's Ready nodes that take pods (not cordoned).
func readyNodes(t testing.TB) []string {
	t.Helper()
	out := mustKube(t, nil, "get", "nodes", "-o",
		`jsonpath={range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{" "}{.spec.unschedulable}{"\n"}{end}`)
	var ready []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[1] == "True" {
			ready = append(ready, f[0])
		}
	}
	return ready
}
