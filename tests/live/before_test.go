package live

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The code before a change, timed beside the current code in the same invocation of
// BenchmarkTimeToReady and BenchmarkSideBySide, run by run, so that both sides meet the same node,
// cluster age and load (`make bench-keygen-before-after`: tests/bench/keygen-before-after.sh
// builds that code's binary and image from a commit, as its own Makefile did).
// LIVE_BENCH_BEFORE names its minicluster-fn binary; without it the benchmarks time the current
// code alone.

// beforeCode is that binary.
type beforeCode struct {
	fn      string
	version string // the first line of its `version`: what the reports call it
}

// requireBefore returns the code before, with the keygen image it renders loaded into the node,
// or nil without LIVE_BENCH_BEFORE.
func requireBefore(b *testing.B) *beforeCode {
	b.Helper()
	if os.Getenv("LIVE_BENCH_BEFORE") == "" {
		return nil
	}
	requireImages(b)
	c, err := loadBefore()
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// loadBefore loads the keygen image that the binary of LIVE_BENCH_BEFORE renders into the node,
// once per test binary, and sets suite.images.before. The image must be in podman's store under
// that name (`make image` of that commit); load-image.sh saves it from there.
var loadBefore = sync.OnceValues(func() (*beforeCode, error) {
	fn := os.Getenv("LIVE_BENCH_BEFORE")
	out, err := run(suite.repo, fn, "version")
	if err != nil {
		return nil, err
	}
	head, image, _ := strings.Cut(strings.TrimSpace(string(out)), "\nkeygen image: ")
	version, _, _ := strings.Cut(head, "\n")
	if image == "" || strings.Contains(image, "\n") {
		return nil, fmt.Errorf("%s version printed no keygen image:\n%s", fn, out)
	}
	// The current binary's image is loaded under its own name: the code before must render
	// another one, or the node would run one keygen image for both sides.
	if image == suite.images.project {
		return nil, fmt.Errorf("LIVE_BENCH_BEFORE=%s renders the current code's keygen image %s: build it with another VERSION (tests/bench/keygen-before-after.sh)", fn, image)
	}
	if err := runScript(filepath.Join(suite.clusterDir, "load-image.sh"), image); err != nil {
		return nil, fmt.Errorf("loading the keygen image of LIVE_BENCH_BEFORE=%s (podman must hold %s: make image at that commit): %v", fn, image, err)
	}
	suite.images.before = image
	fmt.Fprintf(os.Stderr, "live: timing %s (%s) beside the current code, keygen image %s\n", version, fn, image)
	return &beforeCode{fn: fn, version: version}, nil
})

// example copies examples/<name> into a new directory whose MiniCluster runs the code before as
// its generator (the example names ../../bin/minicluster-fn), and returns the directory.
func (c *beforeCode) example(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join(suite.repo, "examples", name)
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setCommand(t, dir, "path: ../../bin/minicluster-fn", "path: ./minicluster-fn")
	if err := os.Symlink(c.fn, filepath.Join(dir, "minicluster-fn")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// interleave runs now and then (the code before) of run i in the order that alternates from run
// to run: now first in even runs.
func interleave(i int, now, then func()) {
	if i%2 == 0 {
		now()
		then()
		return
	}
	then()
	now()
}

// keygenSteps are the keygen pod's steps, from the start of the apply: the watch first saw it (the
// Job controller had created it); the kubelet asked the container runtime for its sandbox (its
// volumes were mounted), and got it (its network set up); its first container started, and
// exited (the container runtime's log). containers counts the containers the pod ran (a failed
// keygen runs again), retries the API calls its log says it retried.
type keygenSteps struct {
	created, sandboxRequested, sandboxReady, containerStarted, exited time.Duration
	containers, retries                                               int
}

func (k keygenSteps) String() string {
	return fmt.Sprintf("keygen pod created %s, its sandbox requested %s, ready %s, its container started %s, exited %s; containers %d, API retries %d",
		twoDecimals(k.created), twoDecimals(k.sandboxRequested), twoDecimals(k.sandboxReady), twoDecimals(k.containerStarted),
		twoDecimals(k.exited), k.containers, k.retries)
}

func twoDecimals(d time.Duration) string {
	if d == 0 {
		return "not observed"
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// The container runtime's log lines of a pod's start (containerd v2, level info):
//
//	time="2026-11-28T20:01:02.276373618Z" level=info msg="RunPodSandbox for name:\"<pod>\"  uid:\"<uid>\"  namespace:\"<ns>\""
//	... msg="RunPodSandbox for name:\"<pod>\"  uid:\"<uid>\"  namespace:\"<ns>\" returns sandbox id \"<sandbox>\""
//	... msg="CreateContainer within sandbox \"<sandbox>\" for name:\"keygen\" returns container id \"<container>\""
//	... msg="StartContainer for \"<container>\" returns successfully"
//	... msg="received container exit event container_id:\"<container>\" ... exited_at:{seconds:1795896062  nanos:547714275}"
var (
	containerdTime   = regexp.MustCompile(`^time="([^"]+)"`)
	sandboxRequested = regexp.MustCompile(`msg="RunPodSandbox for name:\\"[^\\]+\\"\s+uid:\\"([0-9a-f-]{36})\\"\s+namespace:\\"[^\\]+\\"(?:\s+attempt:\d+)?"$`)
	sandboxReady     = regexp.MustCompile(`msg="RunPodSandbox for name:\\"[^\\]+\\"\s+uid:\\"([0-9a-f-]{36})\\".* returns sandbox id \\"([0-9a-f]+)\\""`)
	containerCreated = regexp.MustCompile(`msg="CreateContainer within sandbox \\"([0-9a-f]+)\\" for .* returns container id \\"([0-9a-f]+)\\""`)
	containerStarted = regexp.MustCompile(`msg="StartContainer for \\"([0-9a-f]+)\\" returns successfully"`)
	containerExited  = regexp.MustCompile(`msg="received container exit event container_id:\\"([0-9a-f]+)\\".*exited_at:\{seconds:(\d+)\s+nanos:(\d+)\}`)
)

// keygenPodSteps reads the keygen pod's (uid) steps from the container runtime's log, from offset
// on (what it wrote during the run), and its container's log for API retries. created and the
// run's start come from the watch.
func keygenPodSteps(containerdLog string, offset int64, ns, podName, uid string, created time.Duration, start time.Time) (keygenSteps, error) {
	k := keygenSteps{created: created}
	f, err := os.Open(containerdLog)
	if err != nil {
		return k, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return k, err
	}
	sandbox := ""
	var containers []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		stamp := containerdTime.FindStringSubmatch(line)
		if stamp == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, stamp[1])
		if err != nil {
			return k, fmt.Errorf("%s: %v in %q", containerdLog, err, line)
		}
		if m := sandboxRequested.FindStringSubmatch(line); m != nil && m[1] == uid && k.sandboxRequested == 0 {
			k.sandboxRequested = at.Sub(start)
		} else if m := sandboxReady.FindStringSubmatch(line); m != nil && m[1] == uid && sandbox == "" {
			sandbox, k.sandboxReady = m[2], at.Sub(start)
		} else if m := containerCreated.FindStringSubmatch(line); m != nil && sandbox != "" && m[1] == sandbox {
			containers = append(containers, m[2])
		} else if m := containerStarted.FindStringSubmatch(line); m != nil && len(containers) > 0 && m[1] == containers[0] {
			k.containerStarted = at.Sub(start)
		} else if m := containerExited.FindStringSubmatch(line); m != nil && len(containers) > 0 && m[1] == containers[0] {
			sec, _ := strconv.ParseInt(m[2], 10, 64)
			nsec, _ := strconv.ParseInt(m[3], 10, 64)
			k.exited = time.Unix(sec, nsec).Sub(start)
		}
	}
	if err := sc.Err(); err != nil {
		return k, err
	}
	k.containers = len(containers)
	// The pod ran: if these lines are not all there, the patterns no longer match containerd's.
	if k.sandboxRequested == 0 || k.sandboxReady == 0 || k.containerStarted == 0 || k.exited == 0 {
		return k, fmt.Errorf("%s has not every step of the keygen pod %s/%s (uid %s) that the patterns match: %s", containerdLog, ns, podName, uid, k)
	}
	out, err := kube(nil, "-n", ns, "logs", podName, "-c", "keygen")
	if err != nil {
		return k, err
	}
	k.retries = strings.Count(out, "; retrying in ")
	return k, nil
}

// reportBeforeAfter prints, for the runs of the code before and the current code's of the same
// invocation, the medians of both sides, min-max, per milestone, and the keygen pod's steps.
func reportBeforeAfter(b *testing.B, what string, c *beforeCode, now, then []readyRun) {
	if len(now) == 0 || len(then) == 0 {
		return
	}
	type row struct {
		name string
		get  func(readyRun) time.Duration
	}
	rows := []row{
		{"keygen pod created", func(r readyRun) time.Duration { return r.keygen.created }},
		{"keygen sandbox requested (its volumes mounted)", func(r readyRun) time.Duration { return r.keygen.sandboxRequested }},
		{"keygen sandbox ready", func(r readyRun) time.Duration { return r.keygen.sandboxReady }},
		{"keygen container started", func(r readyRun) time.Duration { return r.keygen.containerStarted }},
		{"keygen pod started (its status in a watch)", func(r readyRun) time.Duration { return r.keygenStarted }},
		{"certificate Secret present", func(r readyRun) time.Duration { return r.certificate }},
		{"keygen container exited", func(r readyRun) time.Duration { return r.keygen.exited }},
		{"keygen container started -> certificate", func(r readyRun) time.Duration {
			if r.certificate == 0 || r.keygen.containerStarted == 0 {
				return 0
			}
			return r.certificate - r.keygen.containerStarted
		}},
		{"rank 0's command output (all joined)", func(r readyRun) time.Duration { return r.commandOutput }},
		{"Job complete", func(r readyRun) time.Duration { return r.complete }},
	}
	cell := func(runs []readyRun, get func(readyRun) time.Duration) (string, time.Duration) {
		var ds []time.Duration
		for _, r := range runs {
			if d := get(r); d != 0 {
				ds = append(ds, d)
			}
		}
		if len(ds) == 0 {
			return "not seen", 0
		}
		slices.Sort(ds)
		med := median(ds)
		return fmt.Sprintf("%.2f (%.2f-%.2f, %d runs)", med.Seconds(), ds[0].Seconds(), ds[len(ds)-1].Seconds(), len(ds)), med
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%s: %s against the current code, interleaved in this invocation (%d and %d runs; seconds from the start of kubectl apply, median (min-max)):\n",
		what, c.version, len(then), len(now))
	fmt.Fprintf(&table, "| milestone | before | now | now - before (medians) |\n|---|---|---|---|\n")
	for _, r := range rows {
		bs, bm := cell(then, r.get)
		ns, nm := cell(now, r.get)
		diff := ""
		if bm != 0 && nm != 0 {
			diff = fmt.Sprintf("%+.2f", (nm - bm).Seconds())
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s |\n", r.name, bs, ns, diff)
	}
	var again, retries [2]int
	for k, runs := range [][]readyRun{then, now} {
		for _, r := range runs {
			again[k] += max(0, r.keygen.containers-1)
			retries[k] += r.keygen.retries
		}
	}
	fmt.Fprintf(&table, "keygen containers run again: before %d, now %d; API calls retried: before %d, now %d\n", again[0], again[1], retries[0], retries[1])
	fmt.Fprint(os.Stderr, table.String())
}
