package live

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAcrossNodes runs MiniClusters on three nodes: each node a kubelet with its own containerd,
// bridge and pod network (tests/cluster/node.sh), so the brokers find each other by the headless
// Service's DNS names and talk across nodes through the host, as on a cluster of machines. Size 3
// puts one broker on each node (the rendered preferred anti-affinity on the hostname); size 4 on
// three nodes still runs, two brokers sharing a node. In both, every broker joins, the command runs
// on every rank, Fluxion lists every broker as a node of its own with none down, and the Job
// completes.
func TestAcrossNodes(t *testing.T) {
	requireImages(t)
	nodes := needNodes(t, 3)
	t.Logf("nodes: %v", nodes)
	const instance = "hello-ranks"

	t.Run("one broker a node", func(t *testing.T) {
		dir := fnDir(t, instance)
		resizeHelloRanks(t, dir, 3)
		ns := namespace(t, "across-3")
		j := checkHelloRanks(t, instance, ns, dir, 3)
		on := brokerNodes(t, ns, j.Metadata.Name)
		if distinct := uniq(on); len(distinct) != 3 {
			t.Errorf("the 3 brokers ran on %v, want one on each of 3 nodes", on)
		}
	})
	t.Run("more brokers than nodes", func(t *testing.T) {
		dir := fnDir(t, instance)
		ns := namespace(t, "across-4")
		j := checkHelloRanks(t, instance, ns, dir, 4)
		on := brokerNodes(t, ns, j.Metadata.Name)
		if distinct := uniq(on); len(distinct) != 3 {
			t.Errorf("the 4 brokers ran on %v, want all 3 nodes used", on)
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

// needNodes makes sure the cluster has at least n Ready nodes and returns their names. Where it
// has fewer (the suite's cluster has one, unless make cluster-up NODES=N started more), it adds
// them with tests/cluster/node.sh, which imports every image of the first node, and removes them
// again when the test ends.
func needNodes(t *testing.T, n int) []string {
	t.Helper()
	have := readyNodes(t)
	for len(have) < n {
		start := time.Now()
		out, err := exec.Command(filepath.Join(suite.clusterDir, "node.sh"), "add").Output()
		if err != nil {
			var stderr string
			if e, ok := err.(*exec.ExitError); ok {
				stderr = string(e.Stderr)
			}
			t.Fatalf("tests/cluster/node.sh add: %v\n%s", err, stderr)
		}
		name := strings.TrimSpace(string(out))
		t.Logf("node %s added in %.1fs", name, time.Since(start).Seconds())
		recordPhase("node "+name+" added (with its images)", time.Since(start), "")
		t.Cleanup(func() {
			if err := runScript(filepath.Join(suite.clusterDir, "node.sh"), "remove", name); err != nil {
				t.Errorf("tests/cluster/node.sh remove %s: %v", name, err)
			}
		})
		have = readyNodes(t)
	}
	return have
}

// readyNodes: the names of the cluster's Ready nodes that take pods (not cordoned).
func readyNodes(t *testing.T) []string {
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
