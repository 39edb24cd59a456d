package live

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestFluxion: the brokers schedule with Fluxion, as users' do (flux.scheduler.simple defaults to
// false, and the stand-in view has flux-sched as the operator's views do). Seen from rank 0 of a
// running cluster: Fluxion's modules are loaded and sched-simple is not, Fluxion enforces the
// queue policy of spec.flux.scheduler.queuePolicy, and `flux run -N2 -n4` puts two tasks on each
// pod, also while a job on more nodes than the cluster has waits.
func TestFluxion(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance = "fluxion"
	ns := namespace(t, "fluxion")
	apply(t, renderKustomize(t, ns, fnDir(t, "fluxion")))
	certificate(t, ns, instance)
	brokersReady(t, ns, instance, 2, runningLimit)
	jobName := brokerJob(t, ns, instance).Metadata.Name

	checkScheduler(t, ns, instance, fluxionModules, "sched-simple")

	// A job on more nodes than the cluster has. Fluxion 0.54 rejects it as unsatisfiable only under
	// fcfs (TestPersistent); under easy and its other backfill policies, a job on more nodes than
	// are up fails to be reserved (EBUSY, not ENODEV) and stays pending, so it must not hold up
	// the jobs behind it.
	tooBig, err := fluxOnRank0(t, ns, instance, "flux submit -N3 hostname")
	if err != nil {
		t.Fatalf("flux submit -N3 hostname: %v\n%s", err, tooBig)
	}
	tooBig = strings.TrimSpace(tooBig)

	// Fluxion says which policy it enforces when qmanager loads.
	dmesg, err := fluxOnRank0(t, ns, instance, "flux dmesg")
	if err != nil {
		t.Fatalf("flux dmesg: %v", err)
	}
	if !strings.Contains(dmesg, "enforced policy (queue=default): easy") {
		var policy []string
		for _, line := range strings.Split(dmesg, "\n") {
			if strings.Contains(line, "policy") {
				policy = append(policy, line)
			}
		}
		t.Errorf("Fluxion does not enforce the queue policy easy; its policy lines:\n%s", strings.Join(policy, "\n"))
	}

	perPod := tasksPerPod(t, ns, instance, "-N2 -n4")
	if len(perPod) != 2 || perPod[jobName+"-0"] != 2 || perPod[jobName+"-1"] != 2 {
		t.Errorf("flux run -N2 -n4 hostname: tasks per pod %v, want 2 on each of %s-0 and %s-1", perPod, jobName, jobName)
	}
	state, err := fluxOnRank0(t, ns, instance, "flux jobs -n -o {state} "+tooBig)
	if err != nil {
		t.Fatalf("flux jobs %s: %v", tooBig, err)
	}
	if state = strings.TrimSpace(state); state != "SCHED" {
		t.Errorf("under easy, the job on 3 nodes is %s, want SCHED (pending): Fluxion's behaviour changed, and docs/generated-objects.md says otherwise", state)
	}
	if out, err := fluxOnRank0(t, ns, instance, "flux cancel "+tooBig); err != nil {
		t.Errorf("flux cancel %s: %v\n%s", tooBig, err, out)
	}
	t.Logf("Fluxion modules loaded, queue policy easy enforced; flux run -N2 -n4 tasks per pod: %v, ran past a job on 3 nodes left %s", perPod, state)
}

// TestSchedulerSimple: flux.scheduler.simple: true runs sched-simple, although the view has
// Fluxion installed in flux-core's prefix (where flux modprobe would load it); sched-simple
// schedules a job across both brokers and rejects one that needs more nodes than there are.
func TestSchedulerSimple(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance = "simple"
	ns := namespace(t, "simple")
	apply(t, renderKustomize(t, ns, fnDir(t, "simple")))
	certificate(t, ns, instance)
	brokersReady(t, ns, instance, 2, runningLimit)
	jobName := brokerJob(t, ns, instance).Metadata.Name

	checkScheduler(t, ns, instance, []string{"sched-simple"}, fluxionModules...)
	perPod := tasksPerPod(t, ns, instance, "-N2 -n2")
	if len(perPod) != 2 || perPod[jobName+"-0"] != 1 || perPod[jobName+"-1"] != 1 {
		t.Errorf("flux run -N2 -n2 hostname: tasks per pod %v, want 1 on each of %s-0 and %s-1", perPod, jobName, jobName)
	}
	exception := allocRejected(t, ns, instance, 3)
	t.Logf("flux run -N2 -n2 tasks per pod: %v; a job on 3 nodes: %s", perPod, exception)
}

// fluxionModules are the modules that make Fluxion the scheduler.
var fluxionModules = []string{"sched-fluxion-resource", "sched-fluxion-qmanager"}

// checkScheduler: on rank 0, `flux module list` shows every module of want and none of unwanted.
func checkScheduler(t *testing.T, ns, instance string, want []string, unwanted ...string) {
	t.Helper()
	out, err := fluxOnRank0(t, ns, instance, "flux module list")
	if err != nil {
		t.Fatalf("flux module list: %v\n%s", err, out)
	}
	var loaded []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			loaded = append(loaded, f[0])
		}
	}
	for _, m := range want {
		if !slices.Contains(loaded, m) {
			t.Errorf("module %s is not loaded:\n%s", m, out)
		}
	}
	for _, m := range unwanted {
		if slices.Contains(loaded, m) {
			t.Errorf("module %s is loaded:\n%s", m, out)
		}
	}
}

// tasksPerPod runs `flux run <runArgs> hostname` on rank 0 (waiting up to two minutes for the
// scheduler) and counts the tasks per pod hostname.
func tasksPerPod(t *testing.T, ns, instance, runArgs string) map[string]int {
	t.Helper()
	out, err := fluxOnRank0(t, ns, instance, "timeout 120 flux run "+runArgs+" hostname")
	if err != nil {
		t.Fatalf("flux run %s hostname: %v\n%s", runArgs, err, out)
	}
	perPod := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		perPod[strings.TrimSpace(line)]++
	}
	return perPod
}

// allocRejected submits a job on nodes nodes and returns the exception event that the scheduler
// ended it with; a job still without one after a minute (left pending) fails the test.
func allocRejected(t *testing.T, ns, instance string, nodes int) string {
	t.Helper()
	id, err := fluxOnRank0(t, ns, instance, fmt.Sprintf("flux submit -N%d hostname", nodes))
	if err != nil {
		t.Fatalf("flux submit -N%d hostname: %v\n%s", nodes, err, id)
	}
	id = strings.TrimSpace(id)
	event, err := fluxOnRank0(t, ns, instance, "flux job wait-event --timeout=60 "+id+" exception")
	if err != nil {
		state, _ := fluxOnRank0(t, ns, instance, "flux jobs -a -o '{id} {status} {nnodes}'")
		t.Fatalf("a job on %d nodes was not rejected within a minute: %v\nflux jobs:\n%s", nodes, err, state)
	}
	event = strings.TrimSpace(event)
	if !strings.Contains(event, `type="alloc"`) {
		t.Errorf("a job on %d nodes ended with an exception other than the scheduler's: %s", nodes, event)
	}
	return event
}
