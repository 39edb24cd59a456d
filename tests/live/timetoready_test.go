package live

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkTimeToReady applies examples/hello-world (size 4) through kustomize and kubectl apply
// --server-side, once per iteration (-benchtime=Nx: N runs), and reports when each step of its
// start was first seen, from apply: the keygen pod started, the certificate Secret present, every
// broker pod's init container started (its volumes, the certificate among them, are mounted), all 4
// broker containers running, all 4 pods Ready (the startupProbe: the broker has joined; a check waits
// for that up to 10 s, looking every 0.1 s), rank 0's command output (its log line's timestamp; the
// command runs once all 4 have joined), and the Job Complete. The times are when a watch of the API
// server delivered the change (milliseconds), not polls.
//
// It also reads the kubelet's log for the back-off of the certificate volume's mount in broker pods
// created before the Secret exists: per pod, the failed attempts and how long after the
// Secret appeared the kubelet's next attempt was allowed. `make bench-live` runs it; see
// docs/benchmarks.md.
//
// With LIVE_BENCH_BEFORE (before_test.go) every iteration runs hello-world twice, rendered by the
// code before and by the current code, in the order that alternates from run to run, each on a
// quiet node (nodeQuiet), and the keygen pod's steps are read too; the report compares both.
func BenchmarkTimeToReady(b *testing.B) {
	requireImages(b)
	const instance, size = "flux-sample", 4
	manifests := renderKustomize(b, "live-bench-ready", filepath.Join(suite.repo, "examples", "hello-world"))
	if c := requireBefore(b); c != nil {
		timeToReadyBeforeAfter(b, c, instance, size, manifests)
		return
	}
	var runs []readyRun
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		ns := namespace(b, "bench-ready")
		b.StartTimer()
		r := timeToReady(b, ns, instance, size, manifests, false)
		b.StopTimer()
		runs = append(runs, r)
		fmt.Fprintf(os.Stderr, "time-to-ready run %d: %s\n", len(runs), r)
		deleteNamespace(b, ns)
		b.StartTimer()
	}
	b.StopTimer()
	reportReadyRuns(b, runs, "", "")
}

// timeToReadyBeforeAfter is BenchmarkTimeToReady with the code before beside the current code.
// Both render into the same namespace, which each run deletes before the other side's.
func timeToReadyBeforeAfter(b *testing.B, c *beforeCode, instance string, size int, manifests []byte) {
	beforeManifests := renderKustomize(b, "live-bench-ready", c.example(b, "hello-world"))
	var now, then []readyRun
	// Each side prints its run as it ends, so the lines show the order too.
	side := func(what string, manifests []byte, runs *[]readyRun) func() {
		return func() {
			ns := namespace(b, "bench-ready")
			r := timeToReady(b, ns, instance, size, manifests, true)
			*runs = append(*runs, r)
			fmt.Fprintf(os.Stderr, "time-to-ready run %d, %s: %s; %s\n", len(*runs), what, r, r.keygen)
			deleteNamespace(b, ns)
			nodeQuiet(b)
		}
	}
	for i := 0; b.Loop(); i++ {
		interleave(i, side("now", manifests, &now), side("before", beforeManifests, &then))
	}
	// An iteration is both sides and their deletions: nothing to read as ns/op.
	b.ReportMetric(0, "ns/op")
	reportReadyRuns(b, now, "", "")
	reportReadyRuns(b, then, " ("+c.version+")", "-before")
	reportBeforeAfter(b, fmt.Sprintf("time to ready, hello-world size %d", size), c, now, then)
}

// readyRun is one run's milestones, from the start of the apply (0: not seen), of a MiniCluster
// of size brokers.
type readyRun struct {
	size                                                                             int
	keygenStarted, certificate, initStarted, running, ready, commandOutput, complete time.Duration
	seenReady                                                                        int
	// Per broker pod: failed mounts of the certificate volume, and the wait from the certificate's
	// appearance to the kubelet's next allowed attempt (0 when the mount did not fail, or the
	// attempt was allowed before).
	failedMounts  []int
	mountBackoff  []time.Duration
	certToInit    []time.Duration // the certificate's appearance to the pod's init container start
	createdToInit []time.Duration // the pod's creation to its init container start
	keygen        keygenSteps     // read only when asked (timeToReady's keygenDetail)
}

func (r readyRun) String() string {
	return fmt.Sprintf("keygen pod started %s, certificate %s, all init containers started %s, %d brokers running %s, "+
		"%d of %d Ready %s, command output %s, Job complete %s; per pod: certificate mount failures %v, "+
		"back-off wait after the certificate %s, certificate -> init started %s, pod created -> init started %s",
		seconds(r.keygenStarted), seconds(r.certificate), seconds(r.initStarted), r.size, seconds(r.running),
		r.seenReady, r.size, seconds(r.ready), seconds(r.commandOutput), seconds(r.complete),
		r.failedMounts, durations(r.mountBackoff), durations(r.certToInit), durations(r.createdToInit))
}

func durations(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.2f", d.Seconds())
	}
	return "[" + strings.Join(s, " ") + "]s"
}

// timeToReady runs hello-world once in ns and returns its milestones; with keygenDetail also the
// keygen pod's steps.
func timeToReady(b *testing.B, ns, instance string, size int, manifests []byte, keygenDetail bool) readyRun {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tl := &timeline{instance: instance, size: size, labels: labelsOf(manifests), pods: map[string]*brokerPodTimes{}, done: make(chan error, 1)}
	for _, res := range []string{"/api/v1/namespaces/" + ns + "/pods", "/api/v1/namespaces/" + ns + "/secrets",
		"/apis/batch/v1/namespaces/" + ns + "/jobs"} {
		if err := watchResource(ctx, res, tl.observe); err != nil {
			b.Fatal(err)
		}
	}
	tl.mu.Lock()
	tl.start = time.Now()
	tl.mu.Unlock()
	// The kubelet's log of this run starts here: the namespace's name is reused from run to run.
	kubeletLog := filepath.Join(suite.state, "log", "kubelet.log")
	logStart, err := os.Stat(kubeletLog)
	if err != nil {
		b.Fatal(err)
	}
	containerdLog := filepath.Join(suite.state, "log", "containerd.log")
	var containerdStart int64
	if keygenDetail {
		fi, err := os.Stat(containerdLog)
		if err != nil {
			b.Fatal(err)
		}
		containerdStart = fi.Size()
	}
	apply(b, manifests)
	select {
	case err := <-tl.done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(completeLimit):
		b.Fatalf("hello-world: the Job did not complete within %s: %s", completeLimit, podsState(b, ns, tl.labels.instance+"="+instance))
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

	certAt := tl.start.Add(tl.certificate)
	backoff, err := mountBackoff(kubeletLog, logStart.Size(), ns, instance, tl.pods, certAt)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(tl.pods)) {
		p := tl.pods[name]
		r.failedMounts = append(r.failedMounts, backoff[p.uid].failures)
		r.mountBackoff = append(r.mountBackoff, backoff[p.uid].wait)
		r.certToInit = append(r.certToInit, p.initStarted-tl.certificate)
		r.createdToInit = append(r.createdToInit, p.initStarted-p.created)
	}
	if keygenDetail {
		if r.keygen, err = keygenPodSteps(containerdLog, containerdStart, ns, tl.keygenPod, tl.keygenUID, tl.keygenCreated, tl.start); err != nil {
			b.Fatal(err)
		}
	}
	return r
}

// timeline collects the milestones from the watches' events.
type timeline struct {
	instance string
	size     int
	labels   labelKeys

	mu                                            sync.Mutex
	start                                         time.Time
	keygenStarted, certificate, running, complete time.Duration
	// The first keygen pod seen, and when.
	keygenPod, keygenUID string
	keygenCreated        time.Duration
	pods                 map[string]*brokerPodTimes
	brokerContainer      string
	done                 chan error
	finished             bool
}

// labelKeys are the label keys by which a render's objects name their MiniCluster and their role.
type labelKeys struct{ instance, component string }

// labelsOf returns the label keys of a render: the contract's (api/contract), or for code from before
// the contract (the code before of make bench-keygen-before-after), the app.kubernetes.io keys it
// used, with the same values.
func labelsOf(manifests []byte) labelKeys {
	if bytes.Contains(manifests, []byte(labelMiniCluster+":")) {
		return labelKeys{labelMiniCluster, labelComponent}
	}
	return labelKeys{"app.kubernetes.io/instance", "app.kubernetes.io/component"}
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
	if tl.start.IsZero() || tl.finished || head.Metadata.Labels[tl.labels.instance] != tl.instance && head.Kind != "Secret" {
		return nil
	}
	at := seen.Sub(tl.start)
	first := func(d *time.Duration) {
		if *d == 0 {
			*d = at
		}
	}
	component := head.Metadata.Labels[tl.labels.component]
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
			if tl.keygenPod == "" {
				tl.keygenPod, tl.keygenUID, tl.keygenCreated = p.Metadata.Name, p.Metadata.UID, at
			}
			if started(p.Status.ContainerStatuses) {
				first(&tl.keygenStarted)
			}
		case "broker":
			bp := tl.pods[p.Metadata.Name]
			if bp == nil {
				bp = &brokerPodTimes{uid: p.Metadata.UID, index: p.index(), created: at}
				tl.pods[p.Metadata.Name] = bp
			}
			// The pod's first container: its init container, or its broker container in a pod
			// without one (view-source ImageVolume). The kubelet reports every init container
			// from its first status on.
			if started(p.Status.InitContainerStatuses) || len(p.Status.InitContainerStatuses) == 0 && started(p.Status.ContainerStatuses) {
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

// certMountFailure matches the kubelet's log line for a failed mount and its back-off:
//
//	E1125 04:13:48.386639 32168 nestedpendingoperations.go:348] Operation for "{volumeName:kubernetes.io/configmap/<pod uid>-flux-curve podName:<pod uid> nodeName:}" failed. No retries permitted until 2026-11-25 04:13:48.886621207 +0000 UTC m=+50.928349743 (durationBeforeRetry 500ms). Error: ...
var certMountFailure = regexp.MustCompile(`Operation for "\{volumeName:kubernetes\.io/(?:configmap|secret)/([0-9a-f-]{36})-flux-curve .*No retries permitted until (\S+ \S+ \S+ \S+) `)

type mountWait struct {
	failures int
	wait     time.Duration
}

// mountBackoff reads, per broker pod (by uid), how often the certificate volume's mount failed and
// how long after certAt the kubelet allowed its next attempt: the wait that the back-off added. It
// reads the kubelet's log from offset on, what it wrote during the run.
func mountBackoff(kubeletLog string, offset int64, ns, instance string, pods map[string]*brokerPodTimes, certAt time.Time) (map[string]mountWait, error) {
	f, err := os.Open(kubeletLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	uids := map[string]bool{}
	for _, p := range pods {
		uids[p.uid] = true
	}
	notFound := fmt.Sprintf(`secret "%s" not found`, certSecret(instance))
	lastRetry := map[string]time.Time{}
	out := map[string]mountWait{}
	notFoundLines := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "Couldn't get secret "+ns+"/") && strings.Contains(line, notFound) {
			notFoundLines++
		}
		m := certMountFailure.FindStringSubmatch(line)
		if m == nil || !uids[m[1]] {
			continue
		}
		until, err := time.Parse("2006-01-02 15:04:05.999999999 -0700 MST", m[2])
		if err != nil {
			return nil, fmt.Errorf("kubelet log: %v in %q", err, line)
		}
		w := out[m[1]]
		w.failures++
		out[m[1]] = w
		lastRetry[m[1]] = until
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	failures := 0
	for uid, until := range lastRetry {
		w := out[uid]
		w.wait = max(0, until.Sub(certAt))
		out[uid] = w
		failures += w.failures
	}
	// The kubelet logs a failed certificate lookup and then the failed mount with its back-off: if
	// the first is there without the second, the pattern above no longer matches the kubelet.
	if notFoundLines > 0 && failures == 0 {
		return nil, fmt.Errorf("%s has %d lines %q of namespace %s but no failed mount of a flux-curve volume that %s matches",
			kubeletLog, notFoundLines, notFound, ns, certMountFailure)
	}
	return out, nil
}

// reportReadyRuns prints the runs' breakdown as a table and reports its medians as metrics. what
// says which render it is ("" for the default), and suffix ends the metrics' units ("" for it too).
func reportReadyRuns(b *testing.B, runs []readyRun, what, suffix string) {
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
		{"all init containers started (volumes mounted; without one, the broker container)", "s-init", one(func(r readyRun) time.Duration { return r.initStarted })},
		{fmt.Sprintf("%d broker containers running", size), "s-running", one(func(r readyRun) time.Duration { return r.running })},
		{fmt.Sprintf("%d pods Ready (joined)", size), "s-ready", one(func(r readyRun) time.Duration { return r.ready })},
		{"rank 0's command output", "s-command", one(func(r readyRun) time.Duration { return r.commandOutput })},
		{"Job complete", "s-complete", one(func(r readyRun) time.Duration { return r.complete })},
		{"per pod: back-off wait after the certificate", "s-mount-backoff", func(r readyRun) []time.Duration { return r.mountBackoff }},
		{"per pod: certificate -> init started", "s-cert-to-init", func(r readyRun) []time.Duration { return r.certToInit }},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "time to ready, hello-world%s size %d, %d runs (seconds from the start of kubectl apply):\n", what, size, len(runs))
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
		b.ReportMetric(med.Seconds(), c.unit+suffix)
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
