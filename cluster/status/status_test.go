package status_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/minicluster-fn/minicluster-fn/cluster/status"
	"github.com/minicluster-fn/minicluster-fn/cluster/status/statustest"
)

// TestSummarize: every phase and every reason, from objects shaped as the API server returns them
// for each case (testdata/cluster.yaml) and the broker scripts' log lines (testdata/logs.yaml).
func TestSummarize(t *testing.T) {
	objs, err := statustest.Objects("testdata/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	logs, err := statustest.Logs("testdata/logs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !status.Needs(objs) {
		t.Error("Needs is false, with MiniClusters that are not healthy")
	}
	if !status.Queued(objs) {
		t.Error("Queued is false, with MiniClusters queued by Kueue")
	}
	rows := status.Summarize(context.Background(), objs, logs)
	want := map[string]struct {
		phase   status.Phase
		brokers string
		cert    status.Certificate
		// reason holds every one of these, in order; none for a healthy phase.
		reason    []string
		managedBy string
	}{
		// Argo CD's label tracking with an Application named as the MiniCluster: its field manager
		// tells (failing's, applied by kubectl, is nobody's).
		"hello":      {status.PhaseSucceeded, "0/2", status.CertificatePresent, nil, "Application/hello"},
		"persistent": {status.PhaseReady, "2/2 (max 4)", status.CertificatePresent, nil, "Kustomization/flux-system/apps"},
		"pullfail": {status.PhaseWaitingForCertificate, "0/2", status.CertificateMissing, []string{
			"the keygen image localhost/minicluster-fn-live/does-not-exist:1 cannot be pulled", "pod pullfail-keygen-c50f362e-kq2xv",
			"failed to pull and unpack image", ": not found", "build and load the image"}, "Application/hpc-apps"},
		"failing": {status.PhaseFailed, "0/2", status.CertificatePresent, []string{
			"pod failing-d5328246-0-abcde container failing exited with status 3", "the command failed with exit status 3",
			"last lines of its log: step 2 | Error: input file missing | failing-d5328246-0: the command failed"}, ""},
		"degraded": {status.PhaseDegraded, "2/3", status.CertificatePresent, []string{"broker pod degraded-d5328246-2-zzzzz has not joined yet"}, ""},
		"huge":     {status.PhaseStarting, "0/2", status.CertificatePresent, []string{"pod huge-d5328246-0-abcde cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu"}, ""},
		"lonely": {status.PhaseStarting, "0/2", status.CertificatePresent, []string{
			"broker pod lonely-d5328246-0-abcde has not joined:", "the main broker: the instance has not started after 90s"}, ""},
		"claims": {status.PhaseStarting, "0/1", status.CertificatePresent, []string{
			"PersistentVolumeClaim claims-results of broker pod claims-d5328246-0-abcde is Pending", `storageclass.storage.k8s.io "does-not-exist" not found`}, ""},
		"quota": {status.PhaseStarting, "0/2", status.CertificatePresent, []string{
			"the Job controller cannot create the pods of Job quota-d5328246", "exceeded quota: no-pods"}, ""},
		"noview": {status.PhaseStarting, "0/1", status.CertificatePresent, []string{
			"the view image ghcr.io/converged-computing/flux-view-ubuntu:tag-noble cannot be pulled", "container flux-view", "401 Unauthorized"}, ""},
		"busy": {status.PhaseRunning, "2/2", status.CertificatePresent, nil, "Application/hpc-apps"},
		// Rank 0's broker exited 0 (the command is over), before the Job controller counted it.
		"ending": {status.PhaseRunning, "1/2", status.CertificatePresent, nil, "Application/hpc-apps"},
		"badkey": {status.PhaseWaitingForCertificate, "0/0", status.CertificateMissing, []string{
			"keygen pod badkey-keygen-c50f362e-b8sd1 failed (exit status 1): keygen: forbidden: the keygen ServiceAccount may not create configmaps"}, ""},
		"noquota": {status.PhaseWaitingForCertificate, "0/0", status.CertificateMissing, []string{
			"the Job controller cannot create the pod of the keygen Job noquota-keygen-c50f362e", "exceeded quota: no-pods"}, ""},
		// Its rank 2's node stopped answering (not evicted yet); rank 1 of stuck was evicted from
		// one and stays Terminating, which a Job with a pod failure policy waits for.
		"nodelost": {status.PhaseDegraded, "2/3", status.CertificatePresent, []string{
			"node node-c stopped answering since 2026-01-01T00:05:00Z: broker pod nodelost-d5328246-2-abcde (rank 2) is there",
			"Kubernetes evicts it 300 s after the node's unreachable taint (its toleration)", "the Job then makes a new pod"}, ""},
		"stuck": {status.PhaseDegraded, "1/2", status.CertificatePresent, []string{
			"broker pod stuck-d5328246-1-abcde (rank 1) is stuck Terminating on node node-c, which stopped answering",
			"no new pod for rank 1", "kubectl taint nodes node-c node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"}, ""},
		// Its command failed when Flux lost rank 2 with its node; the Job waits for that pod.
		"lostworker": {status.PhaseFailed, "0/3", status.CertificatePresent, []string{
			"pod lostworker-d5328246-0-abcde container lostworker exited with status 1: the command failed with exit status 1",
			"job.exception: type=exec severity=0 node failure on lostworker-d5328246-2 (rank 2)",
			"the Job is marked to fail and gets its Failed condition once broker pod lostworker-d5328246-2-abcde, stuck Terminating on node node-c",
			"kubectl taint nodes node-c node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"}, ""},
		// Rank 0's node was lost and its new pod waits for rank 1, which joined the one before.
		"rejoining": {status.PhaseStarting, "1/3", status.CertificatePresent, []string{
			"rank 0's broker (pod rejoining-d5328246-0-zzzzz) started again after broker pods rejoining-d5328246-1-abcde (rank 1) had joined the one before it",
			"join it by themselves"}, ""},
		// Queued by Kueue: waiting for quota; preempted by a Workload of higher priority and queued
		// again; admitted, the Job not resumed yet; suspended for a queue but with no Workload.
		"queued": {status.PhaseQueued, "0/2", status.CertificatePresent, []string{
			"queued by Kueue in LocalQueue team-a (Workload job-queued-d5328246-1a2b3)",
			"couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed"}, ""},
		"preempted": {status.PhaseQueued, "0/2", status.CertificatePresent, []string{
			"evicted by Kueue (Preempted: Preempted to accommodate a workload", "due to prioritization in the ClusterQueue)",
			"and queued again in LocalQueue team-a", "insufficient unused quota for cpu"}, ""},
		"admitting": {status.PhaseQueued, "0/2", status.CertificatePresent, []string{
			"admitted by Kueue in ClusterQueue cluster-queue (Workload job-admitting-d5328246-1a2b3); Kueue resumes the Job"}, ""},
		"nokueue": {status.PhaseQueued, "0/2", status.CertificatePresent, []string{
			"suspended, for Kueue's LocalQueue team-a, and Kueue has made no Workload of Job nokueue-d5328246", "is Kueue running"}, ""},
		// Kueue, managing Jobs without a queue name, holds the keygen Job (and gave it the
		// namespace's default LocalQueue).
		"heldkeygen": {status.PhaseWaitingForCertificate, "0/0", status.CertificateMissing, []string{
			"the keygen Job heldkeygen-keygen-c50f362e is suspended", "manageJobsWithoutQueueName"}, ""},
		"cmcurve": {status.PhaseStarting, "0/1", status.CertificatePresent, []string{
			"image registry.example/app:9 cannot be pulled (pod cmcurve-d5328246-0-abcde, container cmcurve)"}, ""},
	}
	seen := map[string]bool{}
	for _, mc := range rows {
		seen[mc.Name] = true
		w, ok := want[mc.Name]
		if !ok {
			t.Errorf("unexpected MiniCluster %s", mc.Name)
			continue
		}
		if mc.Phase != w.phase || mc.BrokersColumn() != w.brokers || mc.Certificate != w.cert || mc.ManagedBy != w.managedBy {
			t.Errorf("%s: phase %s, brokers %s, certificate %s, managed by %q; want %s, %s, %s, %q",
				mc.Name, mc.Phase, mc.BrokersColumn(), mc.Certificate, mc.ManagedBy, w.phase, w.brokers, w.cert, w.managedBy)
		}
		if w.reason == nil && mc.Reason != "" {
			t.Errorf("%s: reason %q, want none", mc.Name, mc.Reason)
		}
		rest := mc.Reason
		for _, part := range w.reason {
			i := strings.Index(rest, part)
			if i < 0 {
				t.Errorf("%s: reason %q lacks %q (in this order)", mc.Name, mc.Reason, part)
				break
			}
			rest = rest[i+len(part):]
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("MiniCluster %s not found", name)
		}
	}
}

// TestQueuedWorkloadsUnreadable: a user who may not list Kueue's Workloads sees the queue and why
// Kueue's own words are missing.
func TestQueuedWorkloadsUnreadable(t *testing.T) {
	objs, err := statustest.Objects("testdata/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs.Workloads = nil
	objs.WorkloadsUnreadable = `workloads.kueue.x-k8s.io is forbidden: User "viewer" cannot list resource "workloads"`
	for _, mc := range status.Summarize(context.Background(), objs, nil) {
		if mc.Name != "queued" {
			continue
		}
		want := "queued by Kueue in LocalQueue team-a; its Workload cannot be read: " + objs.WorkloadsUnreadable
		if mc.Phase != status.PhaseQueued || mc.Reason != want {
			t.Errorf("queued: phase %s, reason %q; want %s, %q", mc.Phase, mc.Reason, status.PhaseQueued, want)
		}
		return
	}
	t.Fatal("MiniCluster queued not found")
}

// TestBrokers: each broker pod's rank, node and state, the nodes of a MiniCluster in the order of
// its ranks.
func TestBrokers(t *testing.T) {
	objs, err := statustest.Objects("testdata/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"nodelost":   {"0 nodelost-d5328246-0-abcde node-a Joined", "1 nodelost-d5328246-1-abcde node-b Joined", "2 nodelost-d5328246-2-abcde node-c NodeLost"},
		"rejoining":  {"0 rejoining-d5328246-0-zzzzz node-a NotJoined", "1 rejoining-d5328246-1-abcde node-b Rejoining", "2 rejoining-d5328246-2-zzzzz node-a Joined"},
		"stuck":      {"0 stuck-d5328246-0-abcde node-a Joined", "1 stuck-d5328246-1-abcde node-c StuckTerminating"},
		"degraded":   {"0 degraded-d5328246-0-abcde  Joined", "1 degraded-d5328246-1-abcde  Joined", "2 degraded-d5328246-2-zzzzz  NotJoined"},
		"huge":       {"0 huge-d5328246-0-abcde  Pending", "1 huge-d5328246-1-abcde  Pending"},
		"persistent": {"0 persistent-d5328246-0-abcde  Joined", "1 persistent-d5328246-1-abcde  Joined"},
	}
	wantNodes := map[string][]string{"nodelost": {"node-a", "node-b", "node-c"}, "stuck": {"node-a", "node-c"}, "rejoining": {"node-a", "node-b"}}
	for _, mc := range status.Summarize(context.Background(), objs, nil) {
		w, ok := want[mc.Name]
		if !ok {
			continue
		}
		var got []string
		for _, b := range mc.Brokers {
			got = append(got, fmt.Sprintf("%d %s %s %s", b.Rank, b.Pod, b.Node, b.State))
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: brokers\n%s\nwant\n%s", mc.Name, strings.Join(got, "\n"), strings.Join(w, "\n"))
		}
		if !slices.Equal(mc.Nodes, wantNodes[mc.Name]) {
			t.Errorf("%s: nodes %v, want %v", mc.Name, mc.Nodes, wantNodes[mc.Name])
		}
	}
}
