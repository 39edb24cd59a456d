package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkTimeToReady applies examples/hello-world (size 4) through kustomize and kubectl apply
// --server-side, once per iteration (-benchtime=Nx: N runs), and reports when each step of its
// start was first seen, from apply: the keygen pod started, the certificate Secret present, every
// broker pod's init container started (its volumes are mounted; the certificate is not one of
// them), all 4 broker containers running (kubelet creates them once the certificate exists), all 4 pods Ready (the startupProbe: the broker has joined; a check waits
// for that up to 10 s, looking every 0.1 s), rank 0's command output (its log line's timestamp; the
// command runs once all 4 have joined), and the Job Complete. The times are when a watch of the API
// server delivered the change (milliseconds), not polls.
//
// Per broker pod it also reports how often kubelet could not create the broker container because
// the certificate did not exist yet (its Failed events: each costs a retry 10-15 s later), and the
// time from the certificate to the broker container running. `make bench-live` runs it; see
// docs/benchmarks.md.
func BenchmarkTimeToReady(b *testing.B) {
	requireImages(b)
	const instance, size = "flux-sample", 4
	manifests := renderKustomize(b, "live-bench-ready", filepath.Join(suite.repo, "examples", "hello-world"))
	var runs []readyRun
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		ns := namespace(b, "bench-ready")
		b.StartTimer()
		r := timeToReady(b, ns, instance, size, manifests)
		b.StopTimer()
		runs = append(runs, r)
		fmt.Fprintf(os.Stderr, "time-to-ready run %d: %s\n", len(runs), r)
		deleteNamespace(b, ns)
		b.StartTimer()
	}
	b.StopTimer()
	reportReadyRuns(b, runs)
}

// readyRun is one run's milestones, from the start of the apply (0: not seen), of a MiniCluster
// of size brokers.
type readyRun struct {
	size                                                                             int
	keygenStarted, certificate, initStarted, running, ready, commandOutput, complete time.Duration
	seenReady                                                                        int
	// Per broker pod: the broker container's failed creations for want of the certificate, and
	// the times from the certificate's appearance to the broker container running and from the
	// pod's creation to its init container start.
	certMissing   []int
	certToRunning []time.Duration
	createdToInit []time.Duration
}

func (r readyRun) String() string {
	return fmt.Sprintf("keygen pod started %s, certificate %s, all init containers started %s, %d brokers running %s, "+
		"%d of %d Ready %s, command output %s, Job complete %s; per pod: broker container not created for want of the certificate %v, "+
		"certificate -> broker running %s, pod created -> init started %s",
		seconds(r.keygenStarted), seconds(r.certificate), seconds(r.initStarted), r.size, seconds(r.running),
		r.seenReady, r.size, seconds(r.ready), seconds(r.commandOutput), seconds(r.complete),
		r.certMissing, durations(r.certToRunning), durations(r.createdToInit))
}

func durations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return "[" + strings.Join(s, " ") + "]s"
}

// timeToReady runs hello-world once in ns and returns its milestones.
func timeToReady(b *testing.B, ns, instance string, size int, manifests []byte) readyRun {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tl := &timeline{instance: instance, size: size, pods: map[string]*brokerPodTimes{}, done: make(chan error, 1)}
	for _, res := range []string{"/api/v1/namespaces/" + ns + "/pods", "/api/v1/namespaces/" + ns + "/secrets",
		"/apis/batch/v1/namespaces/" + ns + "/jobs"} {
		if err := watchResource(ctx, res, tl.observe); err != nil {
			b.Fatal(err)
		}
	}
	tl.mu.Lock()
	tl.start = time.Now()
	tl.mu.Unlock()
	apply(b, manifests)
	select {
	case err := <-tl.done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(completeLimit):
		b.Fatalf("hello-world: the Job did not complete within %s: %s", completeLimit, podsState(b, ns, labelInstance+"="+instance))
	}
	cancel()

	tl.mu.Lock()
	defer tl.mu.Unlock()
	r := readyRun{size: size, keygenStarted: tl.keygenStarted, certificate: tl.certificate, running: tl.running, complete: tl.complete}
	var ready []time.Duration
	for _, p := range tl.pods {
		r.initStarted = max(r.initStarted, p.initStarted)
		if p.ready > 0 {
			ready = append(ready, p.ready)
		}
	}
	r.seenReady = len(ready)
	if r.seenReady == size {
		r.ready = slices.Max(ready)
	}
	// rank 0 prints the command's output once the instance runs: the container runtime's
	// timestamp of that line.
	rank0 := ""
	for name, p := range tl.pods {
		if p.index == "0" {
			rank0 = name
		}
	}
	r.commandOutput = logLineAt(b, ns, rank0, tl.brokerContainer, "hello world", tl.start)

	missing := map[string]int{}
	notFound := fmt.Sprintf("secret %q not found", certSecret(instance))
	for _, e := range events(b, ns) {
		if e.Reason == "Failed" && strings.Contains(e.Message, notFound) {
			missing[e.InvolvedObject.Name] += max(1, e.Count)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(tl.pods)) {
		p := tl.pods[name]
		r.certMissing = append(r.certMissing, missing[name])
		r.certToRunning = append(r.certToRunning, p.running-tl.certificate)
		r.createdToInit = append(r.createdToInit, p.initStarted-p.created)
	}
	return r
}

// timeline collects the milestones from the watches' events.
type timeline struct {
	instance string
	size     int

	mu                                            sync.Mutex
	start                                         time.Time
	keygenStarted, certificate, running, complete time.Duration
	pods                                          map[string]*brokerPodTimes
	brokerContainer                               string
	done                                          chan error
	finished                                      bool
}

type brokerPodTimes struct {
	uid, index                           string
	created, initStarted, running, ready time.Duration
}

type watchedObject struct {
	Kind     string     `json:"kind"`
	Metadata objectMeta `json:"metadata"`
}

// observe takes one watch event, seen at the given time.
func (tl *timeline) observe(seen time.Time, raw []byte) error {
	var head watchedObject
	if err := json.Unmarshal(raw, &head); err != nil {
		return err
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.start.IsZero() || tl.finished || head.Metadata.Labels[labelInstance] != tl.instance && head.Kind != "Secret" {
		return nil
	}
	at := seen.Sub(tl.start)
	first := func(d *time.Duration) {
		if *d == 0 {
			*d = at
		}
	}
	component := head.Metadata.Labels[labelComponent]
	switch head.Kind {
	case "Secret":
		if head.Metadata.Name == certSecret(tl.instance) {
			first(&tl.certificate)
		}
	case "Pod":
		var p pod
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		started := func(cs []containerStatus) bool {
			return len(cs) > 0 && (cs[0].State.Running != nil || cs[0].State.Terminated != nil)
		}
		switch component {
		case "keygen":
			if started(p.Status.ContainerStatuses) {
				first(&tl.keygenStarted)
			}
		case "broker":
			bp := tl.pods[p.Metadata.Name]
			if bp == nil {
				bp = &brokerPodTimes{uid: p.Metadata.UID, index: p.index(), created: at}
				tl.pods[p.Metadata.Name] = bp
			}
			if started(p.Status.InitContainerStatuses) {
				first(&bp.initStarted)
			}
			if len(p.Status.ContainerStatuses) > 0 {
				tl.brokerContainer = p.Status.ContainerStatuses[0].Name
				if p.Status.ContainerStatuses[0].State.Running != nil {
					first(&bp.running)
				}
			}
			if p.ready() {
				first(&bp.ready)
			}
			running := 0
			for _, q := range tl.pods {
				if q.running > 0 {
					running++
				}
			}
			if running == tl.size {
				first(&tl.running)
			}
		}
	case "Job":
		if component != "broker" {
			return nil
		}
		var j job
		if err := json.Unmarshal(raw, &j); err != nil {
			return err
		}
		if ended, err := jobEnded(&j); ended {
			if err == nil {
				first(&tl.complete)
			}
			tl.finished = true
			tl.done <- err
		}
	}
	return nil
}

// jobEnded: the Job's Complete or Failed condition is True; failed says why for Failed.
func jobEnded(j *job) (ended bool, failed error) {
	if s, why := j.condition("Failed"); s == "True" {
		return true, fmt.Errorf("Job %s failed: %s", j.Metadata.Name, why)
	}
	s, _ := j.condition("Complete")
	return s == "True", nil
}

// logLineAt is when the pod's container logged the line (the container runtime's timestamp of its
// first occurrence, kubectl logs --timestamps), from start. The log must have it.
func logLineAt(t testing.TB, ns, podName, container, line string, start time.Time) time.Duration {
	t.Helper()
	out := mustKube(t, nil, "-n", ns, "logs", podName, "--timestamps", "-c", container)
	for _, l := range strings.Split(out, "\n") {
		if stamp, text, ok := strings.Cut(l, " "); ok && text == line {
			at, err := time.Parse(time.RFC3339Nano, stamp)
			if err != nil {
				t.Fatalf("pod %s's log line %q: %v", podName, l, err)
			}
			return at.Sub(start)
		}
	}
	t.Fatalf("pod %s's log has no line %q:\n%s", podName, line, out)
	return 0
}

// watchResource watches a collection (an API path) with `kubectl get --raw`, from its current
// state on, and passes every object to observe with the time its event arrived. It returns once
// the watch has delivered the initial state, so nothing after that is missed; the watch ends with
// ctx.
func watchResource(ctx context.Context, path string, observe func(time.Time, []byte) error) error {
	cmd := exec.CommandContext(ctx, suite.kubectl, "--kubeconfig", suite.kubeconfig, "get", "--raw",
		path+"?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	synced := make(chan error, 1)
	go func() {
		dec := json.NewDecoder(bufio.NewReader(stdout))
		var err error
		isSynced := false
		for {
			var ev struct {
				Type   string          `json:"type"`
				Object json.RawMessage `json:"object"`
			}
			if err = dec.Decode(&ev); err != nil {
				break
			}
			seen := time.Now()
			if ev.Type == "BOOKMARK" {
				// The end of the initial state is a bookmark with this annotation.
				if !isSynced && strings.Contains(string(ev.Object), `"k8s.io/initial-events-end":"true"`) {
					isSynced = true
					synced <- nil
				}
				continue
			}
			if ev.Type == "ERROR" {
				err = fmt.Errorf("watch of %s: %s", path, ev.Object)
				break
			}
			if err = observe(seen, ev.Object); err != nil {
				break
			}
		}
		werr := cmd.Wait()
		if !isSynced {
			synced <- fmt.Errorf("watch of %s ended before its initial state: %v %v: %s", path, err, werr, stderr.String())
		} else if ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "live: the watch of %s ended early: %v %v: %s\n", path, err, werr, stderr.String())
		}
	}()
	select {
	case err := <-synced:
		return err
	case <-time.After(30 * time.Second):
		return fmt.Errorf("watch of %s: no initial state within 30s", path)
	}
}

// reportReadyRuns prints the medians of the runs and reports them as the benchmark's metrics.
func reportReadyRuns(b *testing.B, runs []readyRun) {
	if len(runs) == 0 {
		return
	}
	size := runs[0].size
	type column struct {
		name, unit string
		get        func(readyRun) []time.Duration
	}
	one := func(f func(readyRun) time.Duration) func(readyRun) []time.Duration {
		return func(r readyRun) []time.Duration {
			if d := f(r); d > 0 {
				return []time.Duration{d}
			}
			return nil
		}
	}
	columns := []column{
		{"keygen pod started", "s-keygen", one(func(r readyRun) time.Duration { return r.keygenStarted })},
		{"certificate Secret present", "s-cert", one(func(r readyRun) time.Duration { return r.certificate })},
		{"all init containers started", "s-init", one(func(r readyRun) time.Duration { return r.initStarted })},
		{fmt.Sprintf("%d broker containers running", size), "s-running", one(func(r readyRun) time.Duration { return r.running })},
		{fmt.Sprintf("%d pods Ready (joined)", size), "s-ready", one(func(r readyRun) time.Duration { return r.ready })},
		{"rank 0's command output", "s-command", one(func(r readyRun) time.Duration { return r.commandOutput })},
		{"Job complete", "s-complete", one(func(r readyRun) time.Duration { return r.complete })},
		{"per pod: certificate -> broker container running", "s-cert-to-running", func(r readyRun) []time.Duration { return r.certToRunning }},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "time to ready, hello-world size %d, %d runs (seconds from the start of kubectl apply):\n", size, len(runs))
	fmt.Fprintf(&table, "| milestone | median | min | max | seen in |\n|---|---|---|---|---|\n")
	for _, c := range columns {
		var all []time.Duration
		seen := 0
		for _, r := range runs {
			if ds := c.get(r); len(ds) > 0 {
				all = append(all, ds...)
				seen++
			}
		}
		if len(all) == 0 {
			fmt.Fprintf(&table, "| %s | not seen | | | 0 of %d runs |\n", c.name, len(runs))
			continue
		}
		slices.Sort(all)
		med := median(all)
		fmt.Fprintf(&table, "| %s | %.2f | %.2f | %.2f | %d of %d runs |\n", c.name, med.Seconds(), all[0].Seconds(), all[len(all)-1].Seconds(), seen, len(runs))
		b.ReportMetric(med.Seconds(), c.unit)
	}
	fmt.Fprint(os.Stderr, table.String())
}

// median of sorted durations.
func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
