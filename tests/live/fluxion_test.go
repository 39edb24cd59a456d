package live

import (
	"slices"
	"strings"
	"testing"
)

// TestFluxion: the brokers schedule with Fluxion, as users' do (flux.scheduler.simple defaults to
// false, and the stand-in view has flux-sched as the operator's views do). Seen from rank 0 of a
// running cluster: Fluxion's modules are loaded and sched-simple is not, Fluxion enforces the
// queue policy of spec.flux.scheduler.queuePolicy, and `flux run -N2 -n4` puts two tasks on each
// pod.
func TestFluxion(t *testing.T) {
	requireImages(t)
	const instance = "fluxion"
	ns := namespace(t, "fluxion")
	apply(t, renderKustomize(t, ns, fnDir(t, "fluxion")))
	certificate(t, ns, instance)
	brokersReady(t, ns, instance, 2, runningLimit)
	jobName := brokerJob(t, ns, instance).Metadata.Name

	modules, err := fluxOnRank0(t, ns, instance, "flux module list")
	if err != nil {
		t.Fatalf("flux module list: %v\n%s", err, modules)
	}
	var loaded []string
	for _, line := range strings.Split(modules, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			loaded = append(loaded, f[0])
		}
	}
	for _, want := range []string{"sched-fluxion-resource", "sched-fluxion-qmanager"} {
		if !slices.Contains(loaded, want) {
			t.Errorf("module %s is not loaded:\n%s", want, modules)
		}
	}
	if slices.Contains(loaded, "sched-simple") {
		t.Errorf("sched-simple is loaded:\n%s", modules)
	}

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

	out, err := fluxOnRank0(t, ns, instance, "timeout 120 flux run -N2 -n4 hostname")
	if err != nil {
		t.Fatalf("flux run -N2 -n4 hostname: %v\n%s", err, out)
	}
	perPod := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		perPod[strings.TrimSpace(line)]++
	}
	if len(perPod) != 2 || perPod[jobName+"-0"] != 2 || perPod[jobName+"-1"] != 2 {
		t.Errorf("flux run -N2 -n4 hostname: tasks per pod %v, want 2 on each of %s-0 and %s-1", perPod, jobName, jobName)
	}
	t.Logf("Fluxion modules loaded, queue policy easy enforced; flux run -N2 -n4 tasks per pod: %v", perPod)
}
