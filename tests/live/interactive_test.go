package live

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rejoinLimit bounds how long a broker pod may take to (re)join the instance.
const rejoinLimit = 2 * time.Minute

// TestPersistent runs a persistent (interactive) MiniCluster and what happens to it over time: the
// brokers stay up and rank 0 reaches every rank; Fluxion rejects a job on more nodes than are up;
// size changes within maxSize, and a job on all three nodes runs after growing; a broker pod is
// deleted; the certificate Secret is deleted; and deleting the cluster stops the brokers
// cleanly (SIGTERM reaches them) instead of waiting out the grace period.
func TestPersistent(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance = "persistent"
	ns := namespace(t, "persistent")
	dir := fnDir(t, "interactive")
	start := time.Now()
	apply(t, renderKustomize(t, ns, dir))
	certificate(t, ns, instance)
	brokersReady(t, ns, instance, 2, runningLimit)
	jobName := brokerJob(t, ns, instance).Metadata.Name
	ranksReachable(t, ns, jobName, 2, rejoinLimit)
	t.Logf("2 ranks reachable from rank 0 %.1fs after apply", time.Since(start).Seconds())

	// The brokers stay up: a persistent cluster has no command that could end.
	time.Sleep(5 * time.Second)
	if j := brokerJob(t, ns, instance); j.Status.Succeeded+j.Status.Failed != 0 {
		t.Fatalf("persistent cluster's brokers ended: succeeded=%d failed=%d", j.Status.Succeeded, j.Status.Failed)
	}

	// Fluxion, with its default policy fcfs, rejects a job on more nodes than the cluster can
	// ever have (maxSize 4) at once instead of leaving it pending; and, since it counts only the
	// nodes that are up, also one on 3 nodes before the cluster grows (docs/generated-objects.md).
	for _, nodes := range []int{5, 3} {
		if event := allocRejected(t, ns, instance, nodes); !strings.Contains(event, "unsatisfiable") {
			t.Errorf("a job on %d nodes was not rejected by Fluxion as unsatisfiable: %s", nodes, event)
		}
	}

	t.Run("grow to 3", func(t *testing.T) {
		resize(t, ns, dir, 2, 3)
		if got := brokerJob(t, ns, instance).Metadata.Name; got != jobName {
			t.Fatalf("a size change renamed the broker Job %s to %s (hash naming must not cover size)", jobName, got)
		}
		brokersRunning(t, ns, instance, 3, runningLimit)
		ranksReachable(t, ns, jobName, 3, rejoinLimit)
		logFlux(t, ns, instance, "after growing to 3")
		// Fluxion schedules on the new rank: a job that needs all three nodes runs, one task on each.
		perPod := tasksPerPod(t, ns, instance, "-N3 -n3")
		if len(perPod) != 3 || perPod[jobName+"-0"] != 1 || perPod[jobName+"-1"] != 1 || perPod[jobName+"-2"] != 1 {
			t.Errorf("flux run -N3 -n3 hostname after growing to 3: tasks per pod %v, want 1 on each of %s-[0-2]", perPod, jobName)
		}
	})

	t.Run("shrink to 2", func(t *testing.T) {
		resize(t, ns, dir, 3, 2)
		gone := waitFor(t, "broker pod "+jobName+"-2 gone", time.Minute, func() (bool, string, error) {
			var l podList
			err := listObjects(&l, ns, "pods", "batch.kubernetes.io/job-completion-index=2")
			return err == nil && len(l.Items) == 0, fmt.Sprintf("%d pods", len(l.Items)), err
		})
		t.Logf("the Job controller removed rank 2's pod in %.1fs", gone.Seconds())
		ranksReachable(t, ns, jobName, 2, rejoinLimit)
		// What Flux makes of a rank that left: recorded, not asserted beyond ranks 0-1 working.
		logFlux(t, ns, instance, "after shrinking to 2")
	})

	t.Run("delete a broker pod", func(t *testing.T) {
		victim := rankPod(t, ns, instance, "1")
		mustKube(t, nil, "-n", ns, "delete", "pod", victim.Metadata.Name, "--wait=false")
		waitFor(t, "a new rank 1 pod", time.Minute, func() (bool, string, error) {
			for _, p := range pods(t, ns, selector(instance, "broker")) {
				if p.index() == "1" && p.Metadata.UID != victim.Metadata.UID && p.Status.Phase == "Running" {
					return true, "", nil
				}
			}
			return false, podsState(t, ns, selector(instance, "broker")), nil
		})
		ranksReachable(t, ns, jobName, 2, rejoinLimit)
		logFlux(t, ns, instance, "after rank 1's pod was replaced")
	})

	t.Run("delete the certificate Secret", func(t *testing.T) {
		mustKube(t, nil, "-n", ns, "delete", "secret", certSecret(instance))
		// Running brokers keep the certificate they copied at start.
		ranksReachable(t, ns, jobName, 2, 30*time.Second)
		// A broker pod made now either joins or says why it cannot start. Kubelet cannot mount a
		// Secret that is gone, but it keeps an immutable Secret (keygen makes it so) that a pod of
		// its node still mounts without watching it, so a new pod on this node gets the
		// certificate from that cache; one on another node would wait in ContainerCreating, with a
		// FailedMount event naming the Secret. (The running pods' own periodic remounts fail too,
		// with FailedMount events of their own: those do not tell about the new pod.)
		victim := rankPod(t, ns, instance, "1")
		mustKube(t, nil, "-n", ns, "delete", "pod", victim.Metadata.Name, "--wait=false")
		outcome := ""
		waitFor(t, "the new rank 1 pod Ready (its broker joined), or an event on it telling why it cannot start", 2*time.Minute, func() (bool, string, error) {
			var replacement string
			for _, p := range pods(t, ns, selector(instance, "broker")) {
				if p.index() != "1" || p.Metadata.Name == victim.Metadata.Name {
					continue
				}
				replacement = p.Metadata.Name
				if p.ready() {
					outcome = "joined: pod " + p.Metadata.Name + " got the certificate from the node's cache of the deleted Secret"
					return true, "", nil
				}
			}
			for _, e := range events(t, ns) {
				if e.Reason == "FailedMount" && e.InvolvedObject.Name == replacement && strings.Contains(e.Message, certSecret(instance)) {
					outcome = "cannot start, and says why: event FailedMount on " + replacement + ": " + e.Message
					return true, "", nil
				}
			}
			return false, podsState(t, ns, selector(instance, "broker")), nil
		})
		t.Logf("the new rank 1 pod after the certificate Secret was deleted: %s", outcome)
	})

	t.Run("delete stops the brokers promptly", func(t *testing.T) {
		grace := 30 // seconds: the pods' default terminationGracePeriodSeconds
		began := time.Now()
		mustKube(t, nil, "-n", ns, "delete", "job", jobName, "--cascade=foreground", "--wait", "--timeout=90s")
		waitFor(t, "broker pods gone", 90*time.Second, func() (bool, string, error) {
			ps := pods(t, ns, selector(instance, "broker"))
			return len(ps) == 0, podsState(t, ns, selector(instance, "broker")), nil
		})
		took := time.Since(began)
		t.Logf("deleting the broker Job removed its pods in %.1fs (grace period %ds)", took.Seconds(), grace)
		// The pods' deletion began after began, and a broker that ignores SIGTERM is killed only
		// when the grace period has passed since then: gone sooner, every broker acted on it. (A
		// margin below the grace period would measure the machine's load instead: a cold run, 4
		// tests at once, took 25.7 s.)
		if took >= time.Duration(grace)*time.Second {
			t.Errorf("the brokers took %.1fs to stop: they did not act on SIGTERM and waited out the grace period", took.Seconds())
		}
	})
}

// resize edits the MiniCluster's size as a user would, renders and applies again.
func resize(t *testing.T, ns, dir string, from, to int) {
	t.Helper()
	setCommand(t, dir, fmt.Sprintf("size: %d", from), fmt.Sprintf("size: %d", to))
	apply(t, renderKustomize(t, ns, dir))
}

// execFailedRank matches flux exec's report of a rank it could not run on.
var execFailedRank = regexp.MustCompile(`flux-exec: Error: rank (\d+): [^\n]*`)

// ranksReachable waits until `flux exec -r all hostname` on rank 0 of the broker Job answers from
// exactly the first n ranks' pods.
func ranksReachable(t *testing.T, ns, jobName string, n int, limit time.Duration) {
	t.Helper()
	want := map[string]bool{}
	for i := range n {
		want[fmt.Sprintf("%s-%d", jobName, i)] = true
	}
	waitFor(t, fmt.Sprintf("flux exec -r all reaching %d ranks", n), limit, func() (bool, string, error) {
		out, err := fluxOnPod(t, ns, jobPod(t, ns, jobName, "0"), "timeout 20 flux exec -r all hostname")
		if err != nil {
			// "all" is every rank up to maxSize. Seen on the cluster: flux exec runs on the ranks
			// that are up, reports each rank beyond size as "flux-exec: Error: rank 2: hostname:
			// No route to host" and exits non-zero. Any other failure, or one of the first n
			// ranks failing, means not (yet) reachable.
			failed := execFailedRank.FindAllStringSubmatch(err.Error(), -1)
			if len(failed) == 0 {
				return false, err.Error(), nil
			}
			for _, f := range failed {
				if r, _ := strconv.Atoi(f[1]); r < n || !strings.Contains(f[0], "No route to host") {
					return false, err.Error(), nil
				}
			}
		}
		got := map[string]bool{}
		for _, h := range strings.Fields(out) {
			got[h] = true
		}
		if len(got) != len(want) {
			return false, "flux exec -r all hostname: " + out, nil
		}
		for h := range want {
			if !got[h] {
				return false, "flux exec -r all hostname: " + out, nil
			}
		}
		return true, "", nil
	})
}

// logFlux records Flux's own view of the instance.
func logFlux(t *testing.T, ns, instance, when string) {
	t.Helper()
	for _, cmd := range []string{"flux overlay status", "flux resource list"} {
		out, err := fluxOnRank0(t, ns, instance, "timeout 20 "+cmd)
		t.Logf("%s: %s:\n%s%v", when, cmd, out, errOrEmpty(err))
	}
}
