package live

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// stopLimit bounds how long the pods of a Job that ended take to stop: the workers' brokers exit
// with the main broker's instance, and the Job controller ends what is left.
const stopLimit = 30 * time.Second

// TestFailedCommand: a command that fails fails its broker Job, once, with its exit status in the
// Job's condition and in rank 0's termination message, and the workers stop; a batch with one
// failing line of three names 1 of 3; with the option failed-command: Complete the Job completes,
// as the operator's does.
func TestFailedCommand(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance, marker = "failed-command", "run-of-the-command"
	failing := fmt.Sprintf(`sh -c 'echo %s; exit 3'`, marker)
	for _, tc := range []struct {
		name    string
		ns      string
		edit    func(t *testing.T, dir string)
		code    int    // rank 0's exit status; 0: the Job completes
		message string // rank 0's termination message
		runs    int    // the marker's lines in rank 0's log
	}{
		{name: "exit 3", ns: "failed-exit-3", code: 3, message: "the command failed with exit status 3", runs: 1,
			edit: func(t *testing.T, dir string) { setCommand(t, dir, "command: COMMAND", "command: "+failing) }},
		{name: "batch, 1 of 3 fails", ns: "failed-batch", code: 1, message: "1 of the 3 batch jobs failed",
			edit: func(t *testing.T, dir string) {
				setCommand(t, dir, "    - image: ubuntu:noble\n      command: COMMAND\n",
					"    - image: ubuntu:noble\n      batch: true\n      command: |\n        echo one\n        sh -c 'exit 5'\n        echo three\n")
			}},
		{name: "option Complete", ns: "failed-complete", runs: 1,
			edit: func(t *testing.T, dir string) {
				setCommand(t, dir, "command: COMMAND", "command: "+failing)
				setCommand(t, dir, "  annotations:\n", "  annotations:\n    minicluster-fn.dev/failed-command: Complete\n")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := namespace(t, tc.ns)
			dir := fnDir(t, "failed-command")
			tc.edit(t, dir)
			start := time.Now()
			apply(t, renderKustomize(t, ns, dir))
			name := brokerJob(t, ns, instance).Metadata.Name
			var j job
			if tc.code == 0 {
				j = jobComplete(t, ns, name, completeLimit)
			} else {
				j = jobFailed(t, ns, name, completeLimit)
				_, why := j.condition("Failed")
				if want := fmt.Sprintf("exit code %d", tc.code); !strings.Contains(why, "PodFailurePolicy") || !strings.Contains(why, want) {
					t.Errorf("Job %s's Failed condition %q does not name the pod failure policy and %s", name, why, want)
				}
			}
			ended := time.Since(start)
			stopped := waitFor(t, "every pod of Job "+name+" stopped", stopLimit, func() (bool, string, error) {
				return activePods(t, ns, name) == 0, podsState(t, ns, "batch.kubernetes.io/job-name="+name), nil
			})
			// Ran once: one pod of rank 0, its broker container never restarted.
			var rank0 []pod
			for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+name) {
				if p.index() == "0" {
					rank0 = append(rank0, p)
				}
			}
			if len(rank0) != 1 {
				t.Fatalf("Job %s has %d pods of rank 0, want 1", name, len(rank0))
			}
			broker := rank0[0].Status.ContainerStatuses[0]
			if broker.RestartCount != 0 || broker.State.Terminated == nil {
				t.Fatalf("rank 0's broker container: %d restarts, terminated %v; want none and terminated", broker.RestartCount, broker.State.Terminated != nil)
			}
			if x := broker.State.Terminated; x.ExitCode != tc.code || (tc.message != "" && strings.TrimSpace(x.Message) != tc.message) {
				t.Errorf("rank 0 exited %d with message %q; want %d, %q", x.ExitCode, x.Message, tc.code, tc.message)
			}
			log := brokerLog(t, ns, rank0[0])
			if n := strings.Count(log, marker); n != tc.runs {
				t.Errorf("rank 0's log shows the command's output %d times, want %d:\n%s", n, tc.runs, log)
			}
			if tc.code == 0 {
				checkAllExitedZero(t, ns, name, 2)
			}
			t.Logf("Job %s ended %.1fs after apply (failed %d, succeeded %d); its pods stopped %.1fs later; rank 0 exited %d: %q",
				name, ended.Seconds(), j.Status.Failed, j.Status.Succeeded, stopped.Seconds(), broker.State.Terminated.ExitCode, broker.State.Terminated.Message)
		})
	}
}

// jobFailed waits until the Job has the condition Failed, and returns it.
func jobFailed(t testing.TB, ns, name string, limit time.Duration) job {
	t.Helper()
	var j job
	waitFor(t, "Job "+name+" failed", limit, func() (bool, string, error) {
		if err := getObject(&j, ns, "jobs", name); err != nil {
			return false, "", err
		}
		if s, _ := j.condition("Complete"); s == "True" {
			return false, "", fmt.Errorf("Job %s completed", name)
		}
		s, why := j.condition("Failed")
		return s == "True", fmt.Sprintf("active=%d succeeded=%d failed=%d %s%s", j.Status.Active, j.Status.Succeeded, j.Status.Failed, why,
			podsState(t, ns, "batch.kubernetes.io/job-name="+name)), nil
	})
	return j
}

// activePods is the number of the Job's pods that have not ended, terminating ones included.
func activePods(t testing.TB, ns, jobName string) int {
	n := jobPods(t, ns, jobName)
	return n.running + n.terminating
}

// podCount counts a Job's pods that have not ended: running (or starting) and being deleted.
type podCount struct{ running, terminating int }

// jobPods counts the Job's pods that have not ended, telling those being deleted from the others.
func jobPods(t testing.TB, ns, jobName string) podCount {
	var n podCount
	for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+jobName) {
		switch {
		case p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed":
		case p.Metadata.DeletionTimestamp != nil:
			n.terminating++
		default:
			n.running++
		}
	}
	return n
}

// TestFailedCommandNotThePod: a pod failure that is not the command keeps today's handling in a
// cluster that ends with its command. Rank 1's pod, deleted while rank 0's command runs, stops
// with 143, which the pod failure policy does not count as the command's failure: the Job starts a
// new pod of index 1, whose broker joins the running instance, and the Job completes when the
// command does.
func TestFailedCommandNotThePod(t *testing.T) {
	t.Parallel()
	requireImages(t)
	takeSlot(t)
	const instance = "failed-command"
	ns := namespace(t, "failed-not-the-pod")
	dir := fnDir(t, "failed-command")
	// A launcher's command runs in rank 0's broker, not as a Flux job that the scheduler may put
	// on rank 1 (a job on the deleted rank fails, and so, rightly, does the Job). It runs long
	// enough for the deleted pod to be replaced and to join before it ends.
	setCommand(t, dir, "      command: COMMAND", "      launcher: true\n      command: sleep 60")
	apply(t, renderKustomize(t, ns, dir))
	brokersReady(t, ns, instance, 2, runningLimit)
	name := brokerJob(t, ns, instance).Metadata.Name
	ranksReachable(t, ns, name, 2, runningLimit)
	deleted := time.Now()
	gone := deletePod(t, ns, name, "1")
	waitFor(t, "rank 1's pod replaced", rejoinLimit, func() (bool, string, error) {
		return gone(), podsState(t, ns, "batch.kubernetes.io/job-name="+name), nil
	})
	ranksReachable(t, ns, name, 2, rejoinLimit)
	rejoined := time.Since(deleted)
	j := jobComplete(t, ns, name, completeLimit)
	if j.Status.Failed != 1 {
		t.Errorf("Job %s counts %d failed pods, want 1 (the deleted one)", name, j.Status.Failed)
	}
	for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+name) {
		if p.index() == "0" && p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("rank 0's broker container restarted %d times", p.Status.ContainerStatuses[0].RestartCount)
		}
	}
	t.Logf("rank 1's pod deleted: every rank reachable again %.1fs later; Job %s complete (failed pods %d, succeeded %d)",
		rejoined.Seconds(), name, j.Status.Failed, j.Status.Succeeded)
}
