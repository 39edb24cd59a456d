package live

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// kueueLimit bounds a Kueue test's MiniClusters: each runs its 20 s command, one after the other.
const kueueLimit = 5 * time.Minute

// workload is what the tests read of Kueue's Workload.
type workload struct {
	Metadata struct {
		Name            string `json:"name"`
		OwnerReferences []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Spec struct {
		QueueName string `json:"queueName"`
		PodSets   []struct {
			Name  string `json:"name"`
			Count int    `json:"count"`
		} `json:"podSets"`
	} `json:"spec"`
	Status struct {
		Admission *struct {
			ClusterQueue      string `json:"clusterQueue"`
			PodSetAssignments []struct {
				Count         int               `json:"count"`
				ResourceUsage map[string]string `json:"resourceUsage"`
			} `json:"podSetAssignments"`
		} `json:"admission"`
	} `json:"status"`
}

// kueueQueue makes a ResourceFlavor and a ClusterQueue whose quota is cpu of CPU, both named name,
// and returns the name. They are deleted when the test ends: after its namespace, when it is called
// before namespace() (a ClusterQueue goes once no Workload holds its quota).
func kueueQueue(t *testing.T, name, cpu string) string {
	t.Helper()
	cluster := fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: %[1]s}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: %[1]s}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: %[1]s
      resources:
      - {name: cpu, nominalQuota: %[2]s}
`, name, cpu)
	mustKube(t, []byte(cluster), "apply", "--server-side", "-f", "-")
	t.Cleanup(func() {
		if _, err := kube([]byte(cluster), "delete", "--ignore-not-found", "--wait", "--timeout=60s", "-f", "-"); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return name
}

// localQueue makes ns one that Kueue manages (the label needKueue returns, taken off again when
// the test ends) and the LocalQueue name in it for the ClusterQueue of the same name.
func localQueue(t *testing.T, label, ns, name string) {
	t.Helper()
	mustKube(t, nil, "label", "namespace", ns, label+"=true")
	t.Cleanup(func() { _, _ = kube(nil, "label", "namespace", ns, label+"-") })
	mustKube(t, []byte(fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %[1]s, namespace: %[2]s}
spec: {clusterQueue: %[1]s}
`, name, ns)), "apply", "--server-side", "-f", "-")
}

// TestKueueQuota: two MiniClusters whose brokers together need more CPU than their ClusterQueue's
// quota, applied at once. Kueue admits one; the other's broker Job waits suspended, and status
// says it is Queued with Kueue's words; they never run at once and both complete. Each broker Job
// is one Workload of size pods with the brokers' requests; the keygen Jobs are not queued.
func TestKueueQuota(t *testing.T) {
	t.Parallel()
	exhaustive(t, "Kueue's quota over two MiniClusters")
	requireImages(t)
	label := needKueue(t)
	takeSlot(t)
	// Room for one MiniCluster of 2 brokers of 100m, not two.
	queue := kueueQueue(t, "live-kueue-quota", "300m")
	ns := namespace(t, "kueue-quota")
	localQueue(t, label, ns, queue)

	instances := []string{"kueue-a", "kueue-b"}
	for _, name := range instances {
		dir := fnDir(t, "kueue")
		setCommand(t, dir, "  name: kueue\n", "  name: "+name+"\n")
		setCommand(t, dir, "QUEUE", queue)
		apply(t, renderKustomize(t, ns, dir))
	}
	jobs := map[string]string{}
	waits := make(chan error, len(instances))
	for _, name := range instances {
		jobs[name] = brokerJob(t, ns, name).Metadata.Name
		// wait keeps waiting while its MiniCluster is queued.
		go func() {
			out, errOut, err := fnCluster("wait", "-n", ns, name, "--for=complete", "--timeout="+kueueLimit.String())
			if err != nil {
				err = fmt.Errorf("minicluster-fn wait -n %s %s --for=complete: %v\n%s%s", ns, name, err, out, errOut)
			}
			waits <- err
		}()
	}

	// Every second until both complete: which Jobs have broker pods that have not ended, and what
	// status says of the one waiting.
	var first, queuedReason string
	waitedFor := map[string]bool{}
	poll(t, "both MiniClusters complete, one after the other", kueueLimit, false, func() (bool, string, error) {
		var running, done []string
		var state []string
		for _, name := range instances {
			var j job
			if err := getObject(&j, ns, "jobs", jobs[name]); err != nil {
				return false, "", err
			}
			if s, why := j.condition("Failed"); s == "True" {
				return false, "", fmt.Errorf("Job %s failed: %s", jobs[name], why)
			}
			if s, _ := j.condition("Complete"); s == "True" {
				done = append(done, name)
				continue
			}
			if activePods(t, ns, jobs[name]) > 0 {
				running = append(running, name)
			}
			suspended := j.Spec.Suspend != nil && *j.Spec.Suspend
			state = append(state, fmt.Sprintf("%s: suspended %v, %d active", name, suspended, j.Status.Active))
		}
		if len(running) > 1 {
			return false, "", fmt.Errorf("the broker pods of %v run at once, over the ClusterQueue's quota", running)
		}
		if first == "" && len(running) == 1 {
			first = running[0]
		}
		rows, err := statusRows(ns)
		if err != nil {
			return false, "", err
		}
		for _, row := range rows {
			if row.Phase == "Queued" {
				waitedFor[row.Name] = true
				if queuedReason == "" && strings.Contains(row.Reason, "insufficient unused quota") {
					queuedReason = row.Reason
				}
			}
		}
		return len(done) == len(instances), strings.Join(state, "; "), nil
	})
	for range instances {
		if err := <-waits; err != nil {
			t.Error(err)
		}
	}
	if first == "" {
		t.Fatal("no MiniCluster was seen running")
	}
	second := instances[0]
	if second == first {
		second = instances[1]
	}
	if !waitedFor[second] {
		t.Errorf("status never said %s was Queued while %s ran", second, first)
	}
	if want := "queued by Kueue in LocalQueue " + queue; !strings.Contains(queuedReason, want) {
		t.Errorf("status's reason for the queued MiniCluster: %q, want it to hold %q and Kueue's no-quota message", queuedReason, want)
	}

	// One Workload per broker Job, of size pods asking for 2 x 100m; none for a keygen Job.
	var workloads struct {
		Items []workload `json:"items"`
	}
	if err := listObjects(&workloads, ns, "workloads", ""); err != nil {
		t.Fatal(err)
	}
	owners := map[string]bool{}
	for _, w := range workloads.Items {
		for _, ref := range w.Metadata.OwnerReferences {
			owners[ref.Name] = true
			if ref.Kind != "Job" || (ref.Name != jobs[instances[0]] && ref.Name != jobs[instances[1]]) {
				t.Errorf("Workload %s is owned by %s %s, not by a broker Job", w.Metadata.Name, ref.Kind, ref.Name)
			}
		}
		if len(w.Spec.PodSets) != 1 || w.Spec.PodSets[0].Count != 2 {
			t.Errorf("Workload %s has pod sets %+v, want one of 2 pods", w.Metadata.Name, w.Spec.PodSets)
		}
		if a := w.Status.Admission; a == nil || a.ClusterQueue != queue || len(a.PodSetAssignments) != 1 ||
			a.PodSetAssignments[0].ResourceUsage["cpu"] != "200m" {
			t.Errorf("Workload %s was admitted as %+v, want by ClusterQueue %s with 200m of CPU", w.Metadata.Name, a, queue)
		}
	}
	for _, name := range instances {
		if !owners[jobs[name]] {
			t.Errorf("no Workload of broker Job %s", jobs[name])
		}
	}
	var keygens jobList
	if err := listObjects(&keygens, ns, "jobs", "minicluster-fn.dev/component=keygen"); err != nil {
		t.Fatal(err)
	}
	for _, j := range keygens.Items {
		if suspended := j.Spec.Suspend != nil && *j.Spec.Suspend; suspended || owners[j.Metadata.Name] {
			t.Errorf("keygen Job %s was queued by Kueue (suspended %v, a Workload of its own %v)", j.Metadata.Name, suspended, owners[j.Metadata.Name])
		}
	}
	t.Logf("%s ran first; %s waited, Queued: %s", first, second, queuedReason)
}

// podUIDs are the UIDs of the instance's broker pods that are not being deleted, by name.
func podUIDs(t testing.TB, ns, instance string) map[string]string {
	uids := map[string]string{}
	for _, p := range pods(t, ns, selector(instance, "broker")) {
		if p.Metadata.DeletionTimestamp == nil {
			uids[p.Metadata.Name] = p.Metadata.UID
		}
	}
	return uids
}

// TestKueueResize: a persistent MiniCluster queued by Kueue, resized within maxSize (2 → 3) as a
// user does, by applying the new render. The broker Job is patched in place, as without Kueue;
// Kueue then finds that the Job no longer matches its admitted Workload, suspends it (its brokers
// stop), makes a Workload of the new size and admits that: the MiniCluster comes back Ready with 3
// brokers, all started again.
func TestKueueResize(t *testing.T) {
	t.Parallel()
	exhaustive(t, "a MiniCluster resized under Kueue")
	requireImages(t)
	label := needKueue(t)
	takeSlot(t)
	queue := kueueQueue(t, "live-kueue-resize", "1")
	ns := namespace(t, "kueue-resize")
	localQueue(t, label, ns, queue)

	const instance = "persistent"
	dir := fnDir(t, "interactive")
	setCommand(t, dir, "  interactive: true\n", "  interactive: true\n  jobLabels:\n    kueue.x-k8s.io/queue-name: "+queue+"\n")
	setCommand(t, dir, "    - image: ubuntu:noble\n", "    - image: ubuntu:noble\n      resources:\n        requests:\n          cpu: 100m\n")
	apply(t, renderKustomize(t, ns, dir))
	before := brokerJob(t, ns, instance)
	brokersReady(t, ns, instance, 2, completeLimit)
	uids := podUIDs(t, ns, instance)

	setCommand(t, dir, "  size: 2\n", "  size: 3\n")
	start := time.Now()
	apply(t, renderKustomize(t, ns, dir))
	after := brokerJob(t, ns, instance)
	if after.Metadata.UID != before.Metadata.UID {
		t.Fatalf("the resize replaced the broker Job (%s -> %s), want it patched", before.Metadata.Name, after.Metadata.Name)
	}
	// What Kueue does with it, as status shows it every second, until 3 brokers have joined.
	phases, row := phaseSequence(t, ns, instance, completeLimit, func(r statusRow) bool {
		return r.Phase == "Ready" && r.Joined == 3
	})
	took := time.Since(start)
	restarted := 0
	for name, uid := range podUIDs(t, ns, instance) {
		if uids[name] == "" || uids[name] != uid {
			restarted++
		}
	}
	var workloads struct {
		Items []workload `json:"items"`
	}
	if err := listObjects(&workloads, ns, "workloads", ""); err != nil {
		t.Fatal(err)
	}
	counts := []int{}
	for _, w := range workloads.Items {
		for _, ps := range w.Spec.PodSets {
			counts = append(counts, ps.Count)
		}
	}
	if len(counts) != 1 || counts[0] != 3 {
		t.Errorf("Workloads' pod set counts after the resize: %v, want one Workload of 3 pods", counts)
	}
	if restarted != 3 || !slices.Contains(phases, "Queued") {
		t.Errorf("after the resize: %d of 3 broker pods new, phases %v; want all 3 new, after Queued (Kueue requeues a Job whose size changed)", restarted, phases)
	}
	t.Logf("resized 2 -> 3 under Kueue: phases %v, Ready with %d brokers %.1fs after the apply, %d of 3 broker pods new (%s)",
		phases, row.Joined, took.Seconds(), restarted, row.Reason)
}

// TestKueuePreemption: a MiniCluster of a higher WorkloadPriorityClass preempts a running one in
// a ClusterQueue with room for one. Kueue evicts the running one: suspends its Job, whose brokers
// stop; status says it is Queued, evicted (Preempted). The higher one runs and completes; then the
// preempted one is admitted again and runs its command again from the start, and completes.
func TestKueuePreemption(t *testing.T) {
	t.Parallel()
	exhaustive(t, "a MiniCluster preempted under Kueue")
	requireImages(t)
	label := needKueue(t)
	takeSlot(t)
	const name = "live-kueue-preemption"
	classes := `apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: live-kueue-low}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: live-kueue-high}
value: 1000
`
	mustKube(t, []byte(classes), "apply", "--server-side", "-f", "-")
	t.Cleanup(func() {
		if _, err := kube([]byte(classes), "delete", "--ignore-not-found", "-f", "-"); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	queue := kueueQueue(t, name, "300m")
	// Preemption within the ClusterQueue, of lower priority only.
	mustKube(t, []byte(`{"spec":{"preemption":{"withinClusterQueue":"LowerPriority"}}}`), "patch", "clusterqueue", queue, "--type=merge", "--patch-file=/dev/stdin")
	ns := namespace(t, "kueue-preemption")
	localQueue(t, label, ns, queue)

	render := func(instance, class, command string) {
		dir := fnDir(t, "kueue")
		setCommand(t, dir, "  name: kueue\n", "  name: "+instance+"\n")
		setCommand(t, dir, "QUEUE", queue+"\n    kueue.x-k8s.io/priority-class: "+class)
		setCommand(t, dir, "command: sleep 20", "command: "+command)
		apply(t, renderKustomize(t, ns, dir))
	}
	render("low", "live-kueue-low", "sleep 40")
	lowJob := brokerJob(t, ns, "low").Metadata.Name
	brokersReady(t, ns, "low", 2, completeLimit)
	lowPods := podUIDs(t, ns, "low")

	start := time.Now()
	render("high", "live-kueue-high", "sleep 10")
	highJob := brokerJob(t, ns, "high").Metadata.Name
	// Until the high one completes: never both running; the low one Queued, evicted. Kueue's Job
	// integration releases the quota as soon as the preempted Job's pods are being deleted (its
	// IsActive is status.active, which leaves terminating pods out), so the higher one's pods may
	// start while the preempted brokers are still stopping: that overlap is measured, not refused.
	var evicted string
	var overlap time.Duration
	var overlapSince time.Time
	poll(t, "the higher-priority MiniCluster to complete", kueueLimit, false, func() (bool, string, error) {
		var hj job
		if err := getObject(&hj, ns, "jobs", highJob); err != nil {
			return false, "", err
		}
		high, low := jobPods(t, ns, highJob), jobPods(t, ns, lowJob)
		if high.running > 0 && low.running > 0 {
			return false, "", fmt.Errorf("the broker pods of both MiniClusters run at once, over the quota: high %+v, low %+v", high, low)
		}
		switch {
		case high.running+high.terminating > 0 && low.terminating > 0 && overlapSince.IsZero():
			overlapSince = time.Now()
		case low.terminating == 0 && !overlapSince.IsZero():
			overlap, overlapSince = max(overlap, time.Since(overlapSince)), time.Time{}
		}
		if row, ok := miniClusterStatus(t, ns, "low"); ok && row.Phase == "Queued" && strings.Contains(row.Reason, "Preempted") && evicted == "" {
			evicted = row.Reason
		}
		s, _ := hj.condition("Complete")
		return s == "True", fmt.Sprintf("high: active %d; low: %+v", hj.Status.Active, low), nil
	})
	if !overlapSince.IsZero() {
		overlap = max(overlap, time.Since(overlapSince))
	}
	highDone := time.Since(start)
	if evicted == "" {
		t.Error("status never said the preempted MiniCluster was Queued after a preemption")
	}
	jobComplete(t, ns, lowJob, kueueLimit)
	lowDone := time.Since(start)
	// The low one ran again from the start: its broker pods are new.
	for name, uid := range lowPods {
		for _, p := range pods(t, ns, selector("low", "broker")) {
			if p.Metadata.Name == name && p.Metadata.UID == uid {
				t.Errorf("broker pod %s of the preempted MiniCluster was not replaced", name)
			}
		}
	}
	side := "no check (one a second) found the higher one's pods beside terminating brokers of the preempted one"
	if overlap > 0 {
		side = fmt.Sprintf("the higher one's pods and the preempted one's terminating brokers existed side by side for up to %.1fs", overlap.Seconds())
	}
	t.Logf("the higher one completed %.1fs after its apply, the preempted one %.1fs after; %s; status while preempted: %s",
		highDone.Seconds(), lowDone.Seconds(), side, evicted)
}

// queuedMiniCluster is a MiniCluster of 2 brokers of 100m CPU in Kueue's LocalQueue queue, on the
// stand-in images, for the GitOps tests.
func queuedMiniCluster(name, queue, command string) string {
	return fmt.Sprintf(`apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: %s
spec:
  size: 2
  jobLabels:
    kueue.x-k8s.io/queue-name: %s
  logging:
    quiet: true
  flux:
    container:
      image: %s
  containers:
    - image: %s
      command: %s
      resources:
        requests:
          cpu: 100m
`, name, queue, suite.images.view, suite.images.app, command)
}

// TestKueueFluxCD: two queued MiniClusters from Git through Flux CD, with room in the quota for
// one. While the first runs and the second waits, each Kustomization is reconciled three times
// (flux reconcile's annotation): the running one is never suspended again and keeps its broker
// pods, the queued one never starts before the first has ended; both complete.
func TestKueueFluxCD(t *testing.T) {
	t.Parallel()
	exhaustive(t, "Kueue with Flux CD")
	label := needKueue(t)
	queue := kueueQueue(t, "live-kueue-fluxcd", "300m")
	repo, _ := newFluxCDTest(t, "kueue-fluxcd")
	system, target := repo.system, repo.target
	localQueue(t, label, target, queue)

	const first, second = "kueue-long", "kueue-short"
	repo.write(t, "hpc/"+first+".yaml", queuedMiniCluster(first, queue, "sleep 60"))
	rev := repo.commit(t, "The first queued MiniCluster")
	repo.bootstrap(t)
	// It runs first: the second comes once it does.
	waitFor(t, "the broker pods of "+first+" running", fluxcdStepLimit, func() (bool, string, error) {
		var jobs jobList
		if err := listObjects(&jobs, target, "jobs", selector(first, "broker")); err != nil || len(jobs.Items) != 1 {
			return false, fmt.Sprintf("broker Jobs: %v", err), nil
		}
		n := activePods(t, target, jobs.Items[0].Metadata.Name)
		return n == 2, fmt.Sprintf("%d active broker pods", n), nil
	})
	repo.write(t, "hpc/"+second+".yaml", queuedMiniCluster(second, queue, "sleep 5"))
	rev = repo.commit(t, "The second queued MiniCluster")
	requestReconcile(t, system, "gitrepositories", "flux-system")
	kustomizationReady(t, system, "flux-system", rev, fluxcdStepLimit)
	// Flux CD counts a suspended Job as Current: the queued MiniCluster's Kustomization is Ready.
	kustomizationReady(t, system, "miniclusters-"+second, rev, fluxcdStepLimit)
	firstJob, secondJob := brokerJob(t, target, first), brokerJob(t, target, second)
	if s := secondJob.Spec.Suspend; s == nil || !*s {
		t.Fatalf("the second MiniCluster's broker Job %s is not suspended while the first runs", secondJob.Metadata.Name)
	}
	if row, _ := miniClusterStatus(t, target, second); row.Phase != "Queued" {
		t.Errorf("status of the second MiniCluster: %s (%s), want Queued", row.Phase, row.Reason)
	}
	uids := podUIDs(t, target, first)

	// Three reconciles of each, while the first runs.
	var lastFirst string
	for i := 1; i <= 3; i++ {
		lastFirst = requestReconcile(t, system, "kustomizations", "miniclusters-"+first)
		at := requestReconcile(t, system, "kustomizations", "miniclusters-"+second)
		waitFor(t, fmt.Sprintf("reconcile %d of Kustomization miniclusters-%s handled", i, second), fluxcdStepLimit, func() (bool, string, error) {
			var k kustomization
			if err := getObject(&k, system, "kustomizations", "miniclusters-"+second); err != nil {
				return false, "", err
			}
			return k.Status.LastHandledReconcileAt == at, "last handled " + k.Status.LastHandledReconcileAt, nil
		})
		var j job
		if err := getObject(&j, target, "jobs", firstJob.Metadata.Name); err != nil {
			t.Fatal(err)
		}
		if j.Spec.Suspend != nil && *j.Spec.Suspend {
			t.Fatalf("after reconcile %d the running MiniCluster's Job %s is suspended", i, j.Metadata.Name)
		}
		if err := getObject(&j, target, "jobs", secondJob.Metadata.Name); err != nil {
			t.Fatal(err)
		}
		if activePods(t, target, firstJob.Metadata.Name) > 0 && (j.Spec.Suspend == nil || !*j.Spec.Suspend) {
			t.Fatalf("after reconcile %d the queued MiniCluster's Job %s runs beside the first", i, j.Metadata.Name)
		}
	}
	now := podUIDs(t, target, first)
	for name, uid := range uids {
		if now[name] != uid {
			t.Errorf("broker pod %s of the running MiniCluster was replaced during the reconciles", name)
		}
	}
	jobComplete(t, target, firstJob.Metadata.Name, kueueLimit)
	jobComplete(t, target, secondJob.Metadata.Name, kueueLimit)
	// The running one's reconciles were handled too (its health check waited for the Job).
	waitFor(t, "the reconciles of Kustomization miniclusters-"+first+" handled", fluxcdStepLimit, func() (bool, string, error) {
		var k kustomization
		if err := getObject(&k, system, "kustomizations", "miniclusters-"+first); err != nil {
			return false, "", err
		}
		return k.Status.LastHandledReconcileAt == lastFirst, "last handled " + k.Status.LastHandledReconcileAt, nil
	})
	t.Logf("Flux CD reconciled both Kustomizations 3 times while %s ran and %s was queued: neither changed state; both completed", first, second)
}
