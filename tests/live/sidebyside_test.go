package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The goals of the side-by-side benchmark, printed with its figures (a benchmark asserts nothing):
// our median at most this share of the operator's, at every size, and within this factor of the
// floor.
const (
	goalOfOperator = 0.8
	goalOfFloor    = 2.0
)

// BenchmarkSideBySide times the Flux Framework operator and our render side by side on the live
// cluster: examples/hello-world (command `echo hello world`, logging.quiet) with spec.size set to
// each size of LIVE_BENCH_SIZES (default "4 8 16 32"), one sub-benchmark per size, each with
// -benchtime=Nx runs (make bench-sidebyside: LIVE_BENCH_RUNS). A run times three sides, one after
// the other on a quiet node (which one starts rotates from run to run), then the floors:
//   - the operator's side: the MiniCluster as TestOperatorLive gives it to the operator
//     (operatorMiniCluster: the stand-in images), applied to its own namespace;
//   - our side, twice: our render of the same file with the same images (oursRendered, as
//     applyBoth), as it is (the init containers copy the view) and with the option
//     minicluster-fn.dev/view-source: ImageVolume (the pods mount the view image), each applied
//     to another namespace and timed by timeToReady, whose breakdown (keygen, certificate, init
//     containers, running, Ready, output, complete) is reported too;
//   - the floor of the pods, twice: an Indexed Job of size pods of the application stand-in, with
//     a broker pod's kinds of volumes (emptyDirs, a ConfigMap, a Secret; for the image-volume
//     render also the view image's volume, mounted as there) and no init container, sleeping:
//     apply -> all size containers running;
//   - the floor of the brokers: `flux start --test-size=size` in one pod of the flux view stand-in,
//     its initial program the same kind of job as the MiniCluster's rank 0 submits, printing the
//     time: from the shell's start to that job's output (measured inside the container, without
//     the pod's start).
//
// Per side and run: apply -> all ranks joined, and apply -> Job complete, from the start of the
// apply. Joined is the container runtime's timestamp of rank 0's `hello world` log line, on every
// side (the pod with job-completion-index 0; the broker container is named after the MiniCluster
// on all of them): flux runs the command only once every broker has joined (quorum). Complete is
// when a watch of the namespace's jobs delivered the Job's Complete condition. Each namespace is
// deleted, and waited for, before the next step. The floor that a render of ours is compared
// with is the sum of the brokers' floor and its pods' floor in the same run: pods must run before
// their brokers can start.
//
// Every run's figures are printed as it ends; per size a table of the medians with the ratios
// ours/operator and ours/floor of each render, and whether the goals hold (ours at most 0.8x the
// operator's median, within 2x of the floor); after all sizes, the same for all of them. `make
// bench-sidebyside` runs it; see docs/benchmarks.md.
//
// With LIVE_BENCH_BEFORE (before_test.go) a run has a fourth side, the code before's render of the
// same file with the view copied, timed as ours is and with the keygen pod's steps read (ours
// too): it and ours (view copied) alternate which of them runs first, whatever the rotation. Per
// size a table compares the two.
func BenchmarkSideBySide(b *testing.B) {
	requireImages(b)
	needOperator(b)
	before := requireBefore(b)
	var sizes []int
	for _, f := range strings.Fields(envOr("LIVE_BENCH_SIZES", "4 8 16 32")) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			b.Fatalf("LIVE_BENCH_SIZES=%q: %q is not a size", os.Getenv("LIVE_BENCH_SIZES"), f)
		}
		sizes = append(sizes, n)
	}
	nodes := readyNodes(b)
	b.Logf("on %d nodes: %v", len(nodes), nodes)
	var all []sideBySideMedians
	for _, size := range sizes {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			if m, ok := benchSideBySide(b, size, before); ok {
				all = append(all, m)
			}
		})
	}
	if len(all) == 0 {
		return
	}
	var table strings.Builder
	fmt.Fprintf(&table, "side by side, hello-world, all sizes, on %d nodes (medians, seconds from the start of kubectl apply):\n", len(nodes))
	fmt.Fprintf(&table, "| size | runs | ours | joined: operator | ours | ours/operator | Job complete: operator | ours | ours/operator | floor | joined ours/floor |\n")
	fmt.Fprintf(&table, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	// Per render: whether the goal of the operator and that of the floor held at every size.
	every := map[string][2]bool{}
	for _, m := range all {
		for _, r := range m.renders() {
			fmt.Fprintf(&table, "| %d | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", m.size, m.runs, r.name,
				m.operator.joined.Seconds(), r.times.joined.Seconds(), r.joinedOfOperator(m.operator),
				m.operator.complete.Seconds(), r.times.complete.Seconds(), r.completeOfOperator(m.operator),
				r.floor.Seconds(), r.joinedOfFloor())
			so, seen := every[r.name]
			if !seen {
				so = [2]bool{true, true}
			}
			every[r.name] = [2]bool{so[0] && r.operatorGoal(m.operator), so[1] && r.floorGoal()}
		}
	}
	for _, r := range all[0].renders() {
		fmt.Fprintf(&table, "goal, ours %s: at most %.1fx the operator's median (joined and complete) at every size: %s\n", r.name, goalOfOperator, held(every[r.name][0]))
		fmt.Fprintf(&table, "goal, ours %s: joined within %.1fx of the floor at every size: %s\n", r.name, goalOfFloor, held(every[r.name][1]))
	}
	fmt.Fprint(os.Stderr, table.String())
}

// sideTimes are one side's figures in one run, from the start of the apply.
type sideTimes struct{ joined, complete time.Duration }

// sideBySideRun is one run at one size.
type sideBySideRun struct {
	size  int
	order []string // the sides in the order they ran
	// ours is our render as it is (the view copied), oursImage with view-source ImageVolume.
	operator, ours, oursImage sideTimes
	// The floors: size bare pods running (with the view image's volume: floorPodsImage), size
	// brokers joined in one container.
	floorPods, floorPodsImage, floorBrokers time.Duration
}

// stalledJoin: a run of ours whose brokers took longer than this to join has its pods' logs and
// the namespace's events kept (keepStalledRun). Our broker scripts report a broker that has not
// joined after 30 s (D-join-report), so such a run's logs say where it waited.
const stalledJoin = 30 * time.Second

// keepStalledRun writes every pod's log (with timestamps) and the namespace's events to
// bin/live-bench-stalled-<what>.log, and names the file in the benchmark's log.
func keepStalledRun(b *testing.B, ns, what string) {
	b.Helper()
	var out strings.Builder
	for _, p := range pods(b, ns, "") {
		for _, c := range p.Status.ContainerStatuses {
			log, err := kube(nil, "-n", ns, "logs", "--timestamps", p.Metadata.Name, "-c", c.Name)
			if err != nil {
				log = err.Error()
			}
			fmt.Fprintf(&out, "=== pod %s, container %s (restarts %d)\n%s\n", p.Metadata.Name, c.Name, c.RestartCount, log)
		}
	}
	events, err := kube(nil, "-n", ns, "get", "events", "--sort-by=.lastTimestamp")
	if err != nil {
		events = err.Error()
	}
	fmt.Fprintf(&out, "=== events\n%s", events)
	file := filepath.Join(suite.repo, "bin", "live-bench-stalled-"+what+".log")
	if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
		b.Error(err)
		return
	}
	b.Logf("%s: the brokers joined after more than %s; the pods' logs and events are in %s", what, stalledJoin, file)
}

func (r sideBySideRun) String() string {
	return fmt.Sprintf("%s; operator: joined %s, Job complete %s; ours (view copied): joined %s, Job complete %s; "+
		"ours (view image volume): joined %s, Job complete %s; floors: %d bare pods running %s (with the view image's volume %s), "+
		"%d brokers joined in one container %s",
		strings.Join(r.order, ", "), seconds(r.operator.joined), seconds(r.operator.complete), seconds(r.ours.joined), seconds(r.ours.complete),
		seconds(r.oursImage.joined), seconds(r.oursImage.complete), r.size, seconds(r.floorPods), seconds(r.floorPodsImage),
		r.size, seconds(r.floorBrokers))
}

// benchSideBySide runs the benchmark at one size, with the code before as a side unless it is nil,
// reports it and returns its medians (ok: at least one run).
func benchSideBySide(b *testing.B, size int, before *beforeCode) (sideBySideMedians, bool) {
	const instance = "flux-sample"
	// hello-world with the size set, as a user would edit it; and with the view from an image
	// volume, as a user would set the option.
	dir, imageDir := b.TempDir(), b.TempDir()
	src, err := os.ReadFile(filepath.Join(suite.repo, "examples", "hello-world", "minicluster.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range []string{dir, imageDir} {
		if err := os.WriteFile(filepath.Join(d, "minicluster.yaml"), src, 0o644); err != nil {
			b.Fatal(err)
		}
		setCommand(b, d, "size: 4", fmt.Sprintf("size: %d", size))
	}
	setImageVolume(b, imageDir)
	file := filepath.Join(dir, "minicluster.yaml")
	mc, _ := operatorMiniCluster(b, file)
	operatorManifest, err := json.Marshal(mc)
	if err != nil {
		b.Fatal(err)
	}
	// Rendered once, into the namespace that namespace(b, "bench-sbs-ours") makes in every run.
	ourManifests := oursRendered(b, file, "live-bench-sbs-ours")
	ourImageManifests := oursRendered(b, filepath.Join(imageDir, "minicluster.yaml"), "live-bench-sbs-ours")
	var beforeManifests []byte
	if before != nil {
		beforeManifests = renderedBy(b, before.fn, file, "live-bench-sbs-ours")
	}

	var runs []sideBySideRun
	var ourRuns, ourImageRuns, beforeRuns []readyRun
	for i := 0; b.Loop(); i++ {
		r := sideBySideRun{size: size}
		var detail, imageDetail, beforeDetail readyRun
		// times: nil for the code before, which only the comparison with ours reads (its detail).
		ours := func(manifests []byte, detail *readyRun, times *sideTimes) func() {
			return func() {
				ns := namespace(b, "bench-sbs-ours")
				*detail = timeToReady(b, ns, instance, size, manifests, before != nil)
				if times != nil {
					*times = sideTimes{joined: detail.commandOutput, complete: detail.complete}
				}
				if detail.commandOutput > stalledJoin {
					keepStalledRun(b, ns, fmt.Sprintf("size%d-run%d", size, i+1))
				}
				deleteNamespace(b, ns)
				nodeQuiet(b)
			}
		}
		type side struct {
			name string
			run  func()
		}
		sides := []side{
			{"operator", func() {
				// A namespace of its own in every run: the operator's controller-runtime queue
				// backs off per MiniCluster (namespace/name), and its failed reconciles while the
				// namespace was deleted added up from run to run in one namespace (at size 4 its
				// joined time rose run by run, 3.7 s to 9.5 s, while ours stayed at 5.4-6.9 s).
				ns := namespace(b, fmt.Sprintf("bench-sbs-op-%d-%d", size, i+1))
				r.operator = operatorSide(b, ns, instance, operatorManifest)
				deleteNamespace(b, ns)
				nodeQuiet(b)
			}},
			{"ours (view copied)", ours(ourManifests, &detail, &r.ours)},
			{"ours (view image volume)", ours(ourImageManifests, &imageDetail, &r.oursImage)},
		}
		if before != nil {
			sides = append(sides, side{"before (view copied)", ours(beforeManifests, &beforeDetail, nil)})
		}
		order := make([]int, len(sides))
		for k := range order {
			order[k] = (i + k) % len(sides)
		}
		if before != nil {
			// Ours (view copied), side 1, first in even runs, the code before's, side 3, in odd ones.
			now, then := slices.Index(order, 1), slices.Index(order, 3)
			if (now < then) != (i%2 == 0) {
				order[now], order[then] = order[then], order[now]
			}
		}
		for _, k := range order {
			r.order = append(r.order, sides[k].name)
			sides[k].run()
		}
		r.floorPods = podsFloor(b, size, false)
		r.floorPodsImage = podsFloor(b, size, true)
		r.floorBrokers = brokersFloor(b, size)
		runs = append(runs, r)
		ourRuns = append(ourRuns, detail)
		ourImageRuns = append(ourImageRuns, imageDetail)
		fmt.Fprintf(os.Stderr, "side by side, size %d, run %d: %s\n", size, len(runs), r)
		fmt.Fprintf(os.Stderr, "side by side, size %d, run %d, ours (view copied) in detail: %s\n", size, len(runs), detail)
		fmt.Fprintf(os.Stderr, "side by side, size %d, run %d, ours (view image volume) in detail: %s\n", size, len(runs), imageDetail)
		if before != nil {
			beforeRuns = append(beforeRuns, beforeDetail)
			fmt.Fprintf(os.Stderr, "side by side, size %d, run %d, ours (view copied): %s\n", size, len(runs), detail.keygen)
			fmt.Fprintf(os.Stderr, "side by side, size %d, run %d, before (view copied) in detail: %s; %s\n", size, len(runs), beforeDetail, beforeDetail.keygen)
		}
	}
	// The whole iteration (all sides, the floors, the deletions) means nothing as ns/op.
	b.ReportMetric(0, "ns/op")
	if len(runs) == 0 {
		return sideBySideMedians{}, false
	}
	reportReadyRuns(b, ourRuns, " (view copied)", "")
	reportReadyRuns(b, ourImageRuns, " (view image volume)", "-image")
	if before != nil {
		reportReadyRuns(b, beforeRuns, " ("+before.version+", view copied)", "-before")
		reportBeforeAfter(b, fmt.Sprintf("side by side, hello-world size %d, the view copied", size), before, ourRuns, beforeRuns)
	}
	m := mediansOf(runs)
	m.report(b)
	return m, true
}

// operatorSide applies the MiniCluster to the operator in ns and times it from the apply.
func operatorSide(b *testing.B, ns, instance string, manifest []byte) sideTimes {
	b.Helper()
	start, complete := timeApply(b, "the operator's Job "+instance+" complete", ns, "jobs", manifest, func(raw []byte) (bool, error) {
		var j job
		if err := json.Unmarshal(raw, &j); err != nil {
			return false, err
		}
		// The operator names its broker Job after the MiniCluster.
		if j.Metadata.Name != instance {
			return false, nil
		}
		return jobEnded(&j)
	}, "-n", ns)
	// Its broker container is named after the MiniCluster too (controllers/flux/containers.go:
	// the container that runs flux gets the MiniCluster's name).
	rank0 := jobPod(b, ns, instance, "0")
	return sideTimes{joined: logLineAt(b, ns, rank0.Metadata.Name, instance, "hello world", start), complete: complete}
}

// timeApply applies the manifests (kubectl apply --server-side, with the extra arguments) and
// returns when the apply started and how long after that a watch of the namespace's resource
// (watchResource) delivered the event on which reached first returned true. reached sees every
// object of the collection in turn; an error from it fails the benchmark, as does what (the
// awaited state, for the message) not coming within completeLimit.
func timeApply(b *testing.B, what, ns, resource string, manifests []byte, reached func(raw []byte) (bool, error), extra ...string) (time.Time, time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu       sync.Mutex
		start    time.Time
		at       time.Duration
		finished bool
	)
	done := make(chan error, 1)
	err := watchResource(ctx, apiGroups[resource]+"/namespaces/"+ns+"/"+resource, func(seen time.Time, raw []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if start.IsZero() || finished {
			return nil
		}
		ok, err := reached(raw)
		if ok || err != nil {
			at, finished = seen.Sub(start), true
			done <- err
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	mu.Lock()
	start = time.Now()
	mu.Unlock()
	apply(b, manifests, extra...)
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(completeLimit):
		b.Fatalf("%s: not reached within %s%s", what, completeLimit, podsState(b, ns, ""))
	}
	mu.Lock()
	defer mu.Unlock()
	return start, at
}

// podsFloor: size pods like broker pods without their work, apply -> all size containers running.
// They have the kinds of volumes our hello-world broker pods have (the view in memory, as
// generators.viewMedium chooses for it), the certificate Secret already there; with viewImage
// also the view image's volume, mounted as with view-source ImageVolume (the whole image in the
// view volume, its opt/software at /opt/software).
// The pods sleep; with no grace period their namespace goes at once.
func podsFloor(b *testing.B, size int, viewImage bool) time.Duration {
	b.Helper()
	ns := namespace(b, "bench-sbs-pods")
	imageMounts, imageVolume := "", ""
	if viewImage {
		imageMounts = `
        - {name: flux-view-image, mountPath: /mnt/flux/view-image, readOnly: true}
        - {name: flux-view-image, mountPath: /opt/software, subPath: opt/software, readOnly: true}`
		imageVolume = fmt.Sprintf(`
      - {name: flux-view-image, image: {reference: %s, pullPolicy: Never}}`, suite.images.view)
	}
	manifests := fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: floor-pods}
data: {entrypoint.sh: "sleep 3600"}
---
apiVersion: v1
kind: Secret
metadata: {name: floor-pods}
stringData: {curve.cert: "not a certificate: nothing reads it"}
---
apiVersion: batch/v1
kind: Job
metadata: {name: floor-pods}
spec:
  completionMode: Indexed
  completions: %[1]d
  parallelism: %[1]d
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: %[2]s
        imagePullPolicy: Never
        command: [sleep, "3600"]
        volumeMounts:
        - {name: flux-view, mountPath: /mnt/flux}
        - {name: flux-operator-home, mountPath: /home/flux-operator}
        - {name: flux-entrypoint, mountPath: /flux_operator, readOnly: true}
        - {name: flux-curve, mountPath: /flux_operator_curve, readOnly: true}%[3]s
      volumes:
      - {name: flux-view, emptyDir: {medium: Memory}}
      - {name: flux-operator-home, emptyDir: {}}
      - {name: flux-entrypoint, configMap: {name: floor-pods}}
      - {name: flux-curve, secret: {secretName: floor-pods, defaultMode: 0400, items: [{key: curve.cert, path: curve.cert}]}}%[4]s
`, size, suite.images.app, imageMounts, imageVolume)
	running := map[string]bool{}
	_, at := timeApply(b, fmt.Sprintf("%d bare pods running", size), ns, "pods", []byte(manifests), func(raw []byte) (bool, error) {
		var p pod
		if err := json.Unmarshal(raw, &p); err != nil {
			return false, err
		}
		if cs := p.Status.ContainerStatuses; len(cs) > 0 && cs[0].State.Running != nil {
			running[p.Metadata.Name] = true
		}
		return len(running) == size, nil
	}, "-n", ns)
	deleteNamespace(b, ns)
	nodeQuiet(b)
	return at
}

// floorStamp is a line of the brokers' floor: the shell's start, the job's output.
var floorStamp = regexp.MustCompile(`(?m)^(start|joined) (\d+\.\d+)\r?$`)

// brokersFloor: size real brokers with a ready config (flux start --test-size: all of them in one
// container, connected over local sockets, no certificate, no network, no pods to wait for) ->
// joined, which the output of a job shows, as in the MiniCluster: flux runs the initial program
// once every broker has joined, and it submits a one-task job as rank 0's script does
// (flux submit -n1 --quiet --watch) that prints the time. Measured inside the container, from the
// shell's start (bash's EPOCHREALTIME) to that time. It runs in a pod of the flux view stand-in on
// the cluster's node rather than on the host: the same flux-core and Fluxion build, the same
// userland and the same node as the brokers of both sides.
func brokersFloor(b *testing.B, size int) time.Duration {
	b.Helper()
	ns := namespace(b, "bench-sbs-brokers")
	const script = `echo "start ${EPOCHREALTIME}"
exec /opt/view/bin/flux start --test-size="$1" /opt/view/bin/flux submit -n1 --quiet --watch date '+joined %s.%N'`
	manifest := fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: floor-brokers}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      automountServiceAccountToken: false
      containers:
      - name: flux
        image: %s
        imagePullPolicy: Never
        command: [/bin/bash, -c, %q, bash, "%d"]
`, suite.images.view, script, size)
	apply(b, []byte(manifest), "-n", ns)
	jobComplete(b, ns, "floor-brokers", completeLimit)
	ps := pods(b, ns, "batch.kubernetes.io/job-name=floor-brokers")
	if len(ps) != 1 {
		b.Fatalf("the brokers' floor Job has %d pods, want 1", len(ps))
	}
	out := mustKube(b, nil, "-n", ns, "logs", ps[0].Metadata.Name, "-c", "flux")
	stamps := map[string]float64{}
	for _, m := range floorStamp.FindAllStringSubmatch(out, -1) {
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			b.Fatal(err)
		}
		stamps[m[1]] = v
	}
	if len(stamps) != 2 {
		b.Fatalf("the brokers' floor logged no start or no joined time:\n%s", out)
	}
	deleteNamespace(b, ns)
	nodeQuiet(b)
	return time.Duration((stamps["joined"] - stamps["start"]) * float64(time.Second))
}

// sideBySideMedians are the medians of one size's runs.
type sideBySideMedians struct {
	size, runs int
	operator   sideTimes
	// Our renders: as it is (the view copied), and with view-source ImageVolume.
	ours, oursImage                         sideTimes
	floorPods, floorPodsImage, floorBrokers time.Duration
	// Of each run's floorPods + floorBrokers, and floorPodsImage + floorBrokers.
	floor, floorImage time.Duration
}

func mediansOf(runs []sideBySideRun) sideBySideMedians {
	med := func(get func(sideBySideRun) time.Duration) time.Duration {
		var ds []time.Duration
		for _, r := range runs {
			ds = append(ds, get(r))
		}
		slices.Sort(ds)
		return median(ds)
	}
	side := func(get func(sideBySideRun) sideTimes) sideTimes {
		return sideTimes{
			joined:   med(func(r sideBySideRun) time.Duration { return get(r).joined }),
			complete: med(func(r sideBySideRun) time.Duration { return get(r).complete }),
		}
	}
	return sideBySideMedians{
		size: runs[0].size, runs: len(runs),
		operator:       side(func(r sideBySideRun) sideTimes { return r.operator }),
		ours:           side(func(r sideBySideRun) sideTimes { return r.ours }),
		oursImage:      side(func(r sideBySideRun) sideTimes { return r.oursImage }),
		floorPods:      med(func(r sideBySideRun) time.Duration { return r.floorPods }),
		floorPodsImage: med(func(r sideBySideRun) time.Duration { return r.floorPodsImage }),
		floorBrokers:   med(func(r sideBySideRun) time.Duration { return r.floorBrokers }),
		floor:          med(func(r sideBySideRun) time.Duration { return r.floorPods + r.floorBrokers }),
		floorImage:     med(func(r sideBySideRun) time.Duration { return r.floorPodsImage + r.floorBrokers }),
	}
}

// renderMedians are one render of ours at one size: its medians and its floor's.
type renderMedians struct {
	name   string // as the tables print it
	suffix string // ends its metrics' units
	times  sideTimes
	floor  time.Duration
}

// renders are our two renders' medians.
func (m sideBySideMedians) renders() []renderMedians {
	return []renderMedians{
		{name: "view copied", times: m.ours, floor: m.floor},
		{name: "view image volume", suffix: "-image", times: m.oursImage, floor: m.floorImage},
	}
}

func (r renderMedians) joinedOfOperator(op sideTimes) float64 {
	return r.times.joined.Seconds() / op.joined.Seconds()
}

func (r renderMedians) completeOfOperator(op sideTimes) float64 {
	return r.times.complete.Seconds() / op.complete.Seconds()
}

func (r renderMedians) joinedOfFloor() float64 { return r.times.joined.Seconds() / r.floor.Seconds() }

func (r renderMedians) operatorGoal(op sideTimes) bool {
	return r.joinedOfOperator(op) <= goalOfOperator && r.completeOfOperator(op) <= goalOfOperator
}

func (r renderMedians) floorGoal() bool { return r.joinedOfFloor() <= goalOfFloor }

func held(ok bool) string {
	if ok {
		return "holds"
	}
	return "DOES NOT HOLD"
}

// report prints the size's table and reports the medians and ratios as the benchmark's metrics.
func (m sideBySideMedians) report(b *testing.B) {
	var table strings.Builder
	fmt.Fprintf(&table, "side by side, hello-world size %d, %d runs (medians, seconds from the start of kubectl apply):\n", m.size, m.runs)
	fmt.Fprintf(&table, "| side | all %d ranks joined (rank 0's output) | Job complete | joined/operator | complete/operator | floor | joined/floor |\n|---|---|---|---|---|---|---|\n", m.size)
	fmt.Fprintf(&table, "| operator | %.2f | %.2f | | | | |\n", m.operator.joined.Seconds(), m.operator.complete.Seconds())
	for _, r := range m.renders() {
		fmt.Fprintf(&table, "| ours, %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", r.name,
			r.times.joined.Seconds(), r.times.complete.Seconds(), r.joinedOfOperator(m.operator), r.completeOfOperator(m.operator),
			r.floor.Seconds(), r.joinedOfFloor())
	}
	fmt.Fprintf(&table, "floors: %d bare pods running %.2f s (with the view image's volume %.2f s), %d brokers joined in one container %.2f s (medians); "+
		"their sums per run, medians %.2f s and %.2f s\n",
		m.size, m.floorPods.Seconds(), m.floorPodsImage.Seconds(), m.size, m.floorBrokers.Seconds(), m.floor.Seconds(), m.floorImage.Seconds())
	for _, r := range m.renders() {
		fmt.Fprintf(&table, "goal, ours %s: at most %.1fx the operator's median: joined %.2fx, complete %.2fx: %s\n",
			r.name, goalOfOperator, r.joinedOfOperator(m.operator), r.completeOfOperator(m.operator), held(r.operatorGoal(m.operator)))
		fmt.Fprintf(&table, "goal, ours %s: joined within %.1fx of the floor: %.2fx: %s\n", r.name, goalOfFloor, r.joinedOfFloor(), held(r.floorGoal()))
	}
	fmt.Fprint(os.Stderr, table.String())
	type metric struct {
		value float64
		unit  string
	}
	metrics := []metric{
		{m.operator.joined.Seconds(), "s-joined-operator"},
		{m.operator.complete.Seconds(), "s-complete-operator"},
		{m.floorPods.Seconds(), "s-floor-pods"},
		{m.floorPodsImage.Seconds(), "s-floor-pods-image"},
		{m.floorBrokers.Seconds(), "s-floor-brokers"},
	}
	for _, r := range m.renders() {
		metrics = append(metrics, []metric{
			{r.times.joined.Seconds(), "s-joined-ours" + r.suffix},
			{r.times.complete.Seconds(), "s-complete-ours" + r.suffix},
			{r.floor.Seconds(), "s-floor" + r.suffix},
			{r.joinedOfOperator(m.operator), "ratio-joined-ours-operator" + r.suffix},
			{r.completeOfOperator(m.operator), "ratio-complete-ours-operator" + r.suffix},
			{r.joinedOfFloor(), "ratio-joined-ours-floor" + r.suffix},
		}...)
	}
	for _, metric := range metrics {
		b.ReportMetric(metric.value, metric.unit)
	}
}

// nodeQuiet waits until the kubelet has cleaned up after every deleted pod: no pod directory under
// its root directory without a pod in the API. The API server forgets a deleted pod before the
// kubelet has removed its volumes (a broker pod's emptyDir holds a copy of the view), and that
// cleanup overlapped the next side's start: at sizes 16 and 32, whichever side ran first in a run
// was the faster one.
func nodeQuiet(b *testing.B) {
	b.Helper()
	// The first node's kubelet, and those tests/cluster/node.sh added (make bench-sidebyside NODES=N).
	dirs, err := filepath.Glob(filepath.Join(suite.state, "nodes", "*", "kubelet", "pods"))
	if err != nil {
		b.Fatal(err)
	}
	dirs = append([]string{filepath.Join(suite.state, "kubelet", "pods")}, dirs...)
	waitFor(b, "the kubelets' cleanup after the deleted pods", 2*time.Minute, func() (bool, string, error) {
		live := map[string]bool{}
		for _, uid := range strings.Fields(mustKube(b, nil, "get", "pods", "--all-namespaces", "-o", "jsonpath={.items[*].metadata.uid}")) {
			live[uid] = true
		}
		var left []string
		for _, dir := range dirs {
			entries, err := os.ReadDir(dir)
			if err != nil && !os.IsNotExist(err) {
				return false, "", err
			}
			for _, e := range entries {
				if !live[e.Name()] {
					left = append(left, filepath.Join(dir, e.Name()))
				}
			}
		}
		return len(left) == 0, fmt.Sprintf("%d pod directories left: %v", len(left), left), nil
	})
	// Flush what the deleted pods left to write back (a disk-backed view volume writes copies of
	// the view), so that the next side does not pay for it. It did not remove the operator's rise
	// from run to run on this VM (docs/benchmarks.md#figures).
	syscall.Sync()
}
