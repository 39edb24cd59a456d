package live

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Bounds of the waits. Measured by hand on a loaded 2-core VM: certificate after 4-5 s, broker pods
// Running after 12-16 s, hello-world Job Complete after 24-36 s.
// The limits leave room for CI without letting a stuck cluster hang.
const (
	certLimit     = 90 * time.Second
	runningLimit  = 3 * time.Minute
	completeLimit = 4 * time.Minute
)

// certSecret is the name of the certificate Secret that the keygen Job publishes: the name of the
// headless Service that owns it, which is the instance's name unless network.headlessName is set
// (none of these tests set it).
func certSecret(instance string) string { return instance }

// certificate waits for the keygen Job to publish certSecret(instance) and returns it.
func certificate(t testing.TB, ns, instance string) secret {
	t.Helper()
	var s secret
	took := waitFor(t, "the keygen Job publishes Secret "+certSecret(instance), certLimit, func() (bool, string, error) {
		if err := getObject(&s, ns, "secrets", certSecret(instance)); err != nil {
			return false, keygenState(t, ns, instance), nil
		}
		return true, "", nil
	})
	// Checked without printing it: it holds the secret key.
	if cert := string(s.Data["curve.cert"]); !strings.Contains(cert, "public-key") || !strings.Contains(cert, "secret-key") {
		t.Fatalf("Secret %s has no CURVE certificate in curve.cert (%d bytes)", certSecret(instance), len(cert))
	}
	t.Logf("certificate Secret %s published %.1fs after the wait began", certSecret(instance), took.Seconds())
	return s
}

func keygenState(t testing.TB, ns, instance string) string {
	var jobs jobList
	if err := listObjects(&jobs, ns, "jobs", selector(instance, "keygen")); err != nil {
		return err.Error()
	}
	var s []string
	for _, j := range jobs.Items {
		s = append(s, fmt.Sprintf("job %s active=%d succeeded=%d failed=%d", j.Metadata.Name, j.Status.Active, j.Status.Succeeded, j.Status.Failed))
	}
	return strings.Join(s, "; ") + podsState(t, ns, selector(instance, "keygen"))
}

// podsState summarizes pods for timeout messages: phase, and why containers wait.
func podsState(t testing.TB, ns, sel string) string {
	var l podList
	if err := listObjects(&l, ns, "pods", sel); err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range l.Items {
		fmt.Fprintf(&b, "; pod %s %s ready=%v", p.Metadata.Name, p.Status.Phase, p.ready())
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if w := c.State.Waiting; w != nil {
				fmt.Fprintf(&b, " %s waiting %s %s", c.Name, w.Reason, w.Message)
			}
			if x := c.State.Terminated; x != nil {
				fmt.Fprintf(&b, " %s exited %d %s", c.Name, x.ExitCode, x.Reason)
			}
		}
	}
	return b.String()
}

// brokerJob returns the instance's one broker Job.
func brokerJob(t testing.TB, ns, instance string) job {
	t.Helper()
	var jobs jobList
	if err := listObjects(&jobs, ns, "jobs", selector(instance, "broker")); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 1 {
		t.Fatalf("want 1 broker Job of %s, have %d", instance, len(jobs.Items))
	}
	return jobs.Items[0]
}

// brokersRunning waits until size broker pods run (all containers started) and returns them.
func brokersRunning(t testing.TB, ns, instance string, size int, limit time.Duration) []pod {
	t.Helper()
	var running []pod
	sel := selector(instance, "broker")
	took := waitFor(t, fmt.Sprintf("%d broker pods of %s running", size, instance), limit, func() (bool, string, error) {
		running = running[:0]
		for _, p := range pods(t, ns, sel) {
			if p.Status.Phase == "Running" && p.Metadata.DeletionTimestamp == nil {
				running = append(running, p)
			}
		}
		return len(running) == size, podsState(t, ns, sel), nil
	})
	t.Logf("%d broker pods running after %.1fs", size, took.Seconds())
	return running
}

// brokersReady waits until size broker pods are Ready: their startup and readiness probes ask the local broker
// whether it has joined the instance.
func brokersReady(t testing.TB, ns, instance string, size int, limit time.Duration) []pod {
	t.Helper()
	var ready []pod
	sel := selector(instance, "broker")
	took := waitFor(t, fmt.Sprintf("%d broker pods of %s Ready", size, instance), limit, func() (bool, string, error) {
		ready = ready[:0]
		for _, p := range pods(t, ns, sel) {
			if p.ready() && p.Metadata.DeletionTimestamp == nil {
				ready = append(ready, p)
			}
		}
		return len(ready) == size, podsState(t, ns, sel), nil
	})
	t.Logf("%d broker pods Ready after %.1fs", size, took.Seconds())
	return ready
}

// jobComplete waits for the Job's Complete condition; a Failed condition ends the wait at once.
func jobComplete(t testing.TB, ns, name string, limit time.Duration) job {
	t.Helper()
	var j job
	took := waitFor(t, "Job "+name+" complete", limit, func() (bool, string, error) {
		if err := getObject(&j, ns, "jobs", name); err != nil {
			return false, "", err
		}
		if s, why := j.condition("Failed"); s == "True" {
			return false, "", fmt.Errorf("Job %s failed: %s", name, why)
		}
		// A container in CrashLoopBackOff has failed more than once: waiting on would only hide it.
		if crashing := crashLooping(t, ns, "batch.kubernetes.io/job-name="+name); crashing != "" {
			return false, "", fmt.Errorf("Job %s: %s", name, crashing)
		}
		s, _ := j.condition("Complete")
		return s == "True", fmt.Sprintf("active=%d succeeded=%d failed=%d%s", j.Status.Active, j.Status.Succeeded, j.Status.Failed,
			podsState(t, ns, "batch.kubernetes.io/job-name="+name)), nil
	})
	t.Logf("Job %s complete after %.1fs", name, took.Seconds())
	return j
}

// crashLooping names the containers of the selected pods that wait in CrashLoopBackOff ("" if none).
func crashLooping(t testing.TB, ns, sel string) string {
	var crashing []string
	for _, p := range pods(t, ns, sel) {
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if w := c.State.Waiting; w != nil && w.Reason == "CrashLoopBackOff" {
				crashing = append(crashing, fmt.Sprintf("pod %s container %s crash-loops after %d restarts", p.Metadata.Name, c.Name, c.RestartCount))
			}
		}
	}
	return strings.Join(crashing, "; ")
}

// rankPod returns the broker pod with the completion index.
func rankPod(t testing.TB, ns, instance, index string) pod {
	t.Helper()
	for _, p := range pods(t, ns, selector(instance, "broker")) {
		if p.index() == index && p.Metadata.DeletionTimestamp == nil {
			return p
		}
	}
	t.Fatalf("no broker pod with index %s", index)
	return pod{}
}

// jobPod is the running pod of the Job's completion index, by the labels the Job controller sets
// (the operator's pods and ours alike).
func jobPod(t testing.TB, ns, jobName, index string) pod {
	t.Helper()
	for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+jobName) {
		if p.index() == index && p.Metadata.DeletionTimestamp == nil {
			return p
		}
	}
	t.Fatalf("Job %s has no pod with index %s", jobName, index)
	return pod{}
}

// brokerLog is the log of the pod's broker container (the first container: the application's).
func brokerLog(t testing.TB, ns string, p pod) string {
	t.Helper()
	return mustKube(t, nil, "-n", ns, "logs", p.Metadata.Name, "-c", p.Status.ContainerStatuses[0].Name)
}

// fluxOnRank0 runs a flux command in rank 0's broker container, connected to the instance the way
// the generated flux-connect.sh does (the view's environment, then the broker's local socket).
func fluxOnRank0(t *testing.T, ns, instance, fluxArgs string) (string, error) {
	t.Helper()
	return fluxOnPod(t, ns, rankPod(t, ns, instance, "0"), fluxArgs)
}

// fluxOnPod runs a flux command in the pod's broker container, as fluxOnRank0 does. The
// operator's pods have the same files (its view mounted at /mnt/flux, flux-view.sh).
func fluxOnPod(t *testing.T, ns string, p pod, fluxArgs string) (string, error) {
	t.Helper()
	// A pod just created has no container status yet: an error, which a waitFor retries.
	if len(p.Status.ContainerStatuses) == 0 {
		return "", fmt.Errorf("pod %s: no container has started yet", p.Metadata.Name)
	}
	script := `. /mnt/flux/flux-view.sh && flux proxy "$fluxsocket" ` + fluxArgs
	return kube(nil, "-n", ns, "exec", p.Metadata.Name, "-c", p.Status.ContainerStatuses[0].Name, "--", "bash", "-c", script)
}

// checkAllExitedZero: every container of every pod of the Job ended with status 0.
func checkAllExitedZero(t testing.TB, ns, jobName string, want int) {
	t.Helper()
	ps := pods(t, ns, "batch.kubernetes.io/job-name="+jobName)
	succeeded := 0
	for _, p := range ps {
		for _, c := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			x := c.State.Terminated
			if x == nil {
				t.Errorf("pod %s container %s has not exited", p.Metadata.Name, c.Name)
				continue
			}
			if x.ExitCode != 0 {
				t.Errorf("pod %s container %s exited %d (%s)", p.Metadata.Name, c.Name, x.ExitCode, x.Reason)
			}
		}
		if p.Status.Phase == "Succeeded" {
			succeeded++
		}
	}
	if succeeded != want {
		t.Errorf("%d pods of Job %s succeeded, want %d", succeeded, jobName, want)
	}
}
