package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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

// operatorDefaultView is the flux view image the operator uses when spec.flux.container.image is
// not set (its CRD's default), which the stand-in replaces on the operator's side as on ours.
const operatorDefaultView = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"

// TestOperatorLive runs the same MiniClusters through the Flux Framework operator and through
// minicluster-fn, side by side on the live cluster: the operator's manager as a host process (built
// from ../shared/vendor with its real keygen, with the RBAC of its own config/), given the
// MiniCluster in one namespace; our render of it applied in another. Both sides get the same
// stand-in images (standIn: on the operator's side in the MiniCluster, on ours in the output).
// The MiniClusters: hello-world, batch and a persistent cluster, side by side at once; with make
// test-all also those three with our view from an image volume, and every file of the operator's
// corpus that tests/live can run (TestCorpus's rule, with its sleeps cut as there); a corpus file
// that one side refuses is applied to the other alone, and its row gives both answers.
// It compares the end states: the Job completed or kept running, the ranks that joined, each
// rank's output, and the objects that exist, by role. One row per MiniCluster: same, better (with
// the rules of docs/differences-from-operator.md that say why), or different, which fails the
// test. For hello-world and the persistent cluster, the row also gives what each side says of the
// MiniCluster's state, side by side: our phase (minicluster-fn status) and the operator's
// MiniCluster conditions, as they changed from the apply on and at the end state (statusSampler).
// The table is logged and written to bin/live-operator.md.
func TestOperatorLive(t *testing.T) {
	t.Parallel()
	requireImages(t)
	needOperator(t)
	type row struct{ file, outcome, status string }
	var rows []*row
	named := []struct {
		name, file string
		status     bool // compare the status too
	}{
		{"hello-world", "examples/hello-world/minicluster.yaml", true},
		{"batch", "examples/batch/minicluster.yaml", false},
		{"persistent", "tests/live/testdata/interactive.yaml", true},
	}
	t.Run("examples", func(t *testing.T) {
		for _, c := range named {
			r := &row{file: c.file, outcome: "not run"}
			rows = append(rows, r)
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				takeSlotAhead(t)
				r.outcome = "FAILED (the test's log has the reason)"
				var status *string
				if c.status {
					status = &r.status
				}
				r.outcome = sideBySide(t, c.name, filepath.Join(suite.repo, c.file), nil, status)
			})
		}
	})
	// The same three with the view from an image volume (minicluster-fn.dev/view-source:
	// ImageVolume), the render that is faster than the operator at every size where the node mounts
	// image volumes (docs/benchmarks.md): it must reach the operator's end states too.
	t.Run("image-volume", func(t *testing.T) {
		exhaustive(t, "the operator side by side with the view from an image volume")
		for _, c := range named {
			r := &row{file: c.file + " with view-source ImageVolume", outcome: "not run"}
			rows = append(rows, r)
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				takeSlotAhead(t)
				r.outcome = "FAILED (the test's log has the reason)"
				r.outcome = sideBySide(t, c.name+"-image", withImageVolume(t, filepath.Join(suite.repo, c.file)), nil, nil)
			})
		}
	})
	corpus := envOr("MINICLUSTER_FN_CORPUS", filepath.Join(suite.repo, "..", "shared", "corpus", "flux-operator-examples"))
	files, _ := filepath.Glob(filepath.Join(corpus, "*"))
	if len(files) == 0 {
		t.Logf("SKIPPED: the corpus is not at %s (../shared is absent): its files are not in the table", corpus)
	}
	t.Run("corpus", func(t *testing.T) {
		exhaustive(t, "the operator side by side on the corpus")
		for _, file := range corpusFiles(t, corpus) {
			rel, _ := filepath.Rel(corpus, file)
			r := &row{file: "corpus/" + rel, outcome: "not run"}
			rows = append(rows, r)
			t.Run(rel, func(t *testing.T) {
				src, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				name := namespaceFor("c", rel)
				if _, err := run(filepath.Dir(file), suite.fn, "render", file); err != nil {
					t.Parallel()
					takeSlotAhead(t)
					r.outcome = "FAILED (the test's log has the reason)"
					r.outcome = refusedByUs(t, name, file, err)
					return
				}
				if why := cannotRunHere(string(src)); why != "" {
					r.outcome = "skipped: " + why
					t.Skip(why)
				}
				t.Parallel()
				takeSlotAhead(t)
				r.outcome = "FAILED (the test's log has the reason)"
				var failure *operatorFailure
				if f, ok := operatorFailures[rel]; ok {
					failure = &f
				}
				file, _ := cutSleeps(t, file, src)
				r.outcome = sideBySide(t, name, file, failure, nil)
			})
		}
	})
	var table strings.Builder
	table.WriteString("| MiniCluster | outcome | status: ours and the operator's conditions |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&table, "| %s | %s | %s |\n", r.file, r.outcome, r.status)
	}
	t.Logf("the operator and minicluster-fn side by side:\n%s", table.String())
	if err := os.WriteFile(filepath.Join(suite.repo, "bin", "live-operator.md"), []byte(table.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// withImageVolume is a copy of the MiniCluster file with the option view-source ImageVolume
// (setImageVolume).
func withImageVolume(t *testing.T, file string) string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "minicluster.yaml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	setImageVolume(t, dir)
	return filepath.Join(dir, "minicluster.yaml")
}

// refusedByUs: a file that our render refuses goes to the operator alone. Its row gives our
// message and what the operator made of the file (the API server may prune what its schema lacks).
func refusedByUs(t *testing.T, name, file string, ours error) string {
	mc, _ := operatorMiniCluster(t, file)
	instance, _ := mc["metadata"].(map[string]any)["name"].(string)
	opNS := namespace(t, "op-"+name)
	manifest, err := json.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}
	operator := ""
	if _, err := kube(manifest, "apply", "--server-side", "-n", opNS, "-f", "-"); err != nil {
		operator = "refused it too: " + firstLine(err.Error())
	} else {
		operatorJob(t, opNS, instance)
		operator = "accepted it and made its Job"
	}
	// Our message without the command and the file's path: from the object on.
	msg := firstLine(ours.Error())
	if i := strings.Index(msg, "MiniCluster/"); i >= 0 {
		msg = msg[i:]
	}
	return fmt.Sprintf("refused by us: %q; the operator %s (D-strict-input)", msg, operator)
}

// operatorFailure is what the operator's side of a MiniCluster is known to do instead of reaching
// its end state: the log line that shows it, of one of its broker pods' containers, or (container
// "") of the operator's manager, and the rule of docs/differences-from-operator.md that explains it.
type operatorFailure struct{ container, evidence, rule string }

// operatorFailures, by corpus file.
var operatorFailures = map[string]operatorFailure{
	// A volume with only a path: the operator's Job has a PersistentVolumeClaim volume with an
	// empty claim name, which the API server refuses, so no Job is ever made.
	"tests/batch/minicluster.yaml": {"", "persistentVolumeClaim.claimName: Required value", "F-empty-claim"},
	// The sidecar's start script waits for <mountPath>/view/run/flux/local; the broker's socket is
	// <mountPath>/config/run/flux/local. flux proxy fails, and the container restarts.
	"tests/flux-sidecar/minicluster.yaml": {"flux-queue", "broker socket /mnt/flux/view/run/flux/local was not found", "F-sidecar-socket"},
}

// sideBySide applies one MiniCluster both ways, waits for both end states and compares them.
// failure, if not nil, is what the operator's side does instead (then only ours must complete).
// status, if not nil, gets what each side said of the MiniCluster's state (statusSampler).
func sideBySide(t *testing.T, name, file string, failure *operatorFailure, status *string) string {
	mc, spec := operatorMiniCluster(t, file)
	instance, _ := mc["metadata"].(map[string]any)["name"].(string)
	size := 1
	if n, ok := spec["size"].(float64); ok {
		size = int(n)
	}
	brokers := size
	interactive, _ := spec["interactive"].(bool)

	start := time.Now()
	opNS, ourNS := applyBoth(t, name, file, mc)
	var sampler *statusSampler
	if status != nil {
		sampler = sampleStatus(ourNS, opNS, instance)
		defer sampler.stop()
	}

	// The operator names the broker Job after the MiniCluster; ours is <name>-<hash>.
	opJob := instance
	if failure == nil || failure.container != "" {
		operatorJob(t, opNS, instance)
	}
	ourJob := brokerJob(t, ourNS, instance).Metadata.Name
	var end string
	// Rules of docs/differences-from-operator.md that explain a difference of the logs.
	logRules := map[string]bool{}
	if interactive {
		for _, side := range []struct{ ns, job string }{{opNS, opJob}, {ourNS, ourJob}} {
			ranksReachable(t, side.ns, side.job, size, runningLimit)
			if j := getJob(t, side.ns, side.job); j.Status.Succeeded+j.Status.Failed != 0 {
				t.Errorf("%s: the persistent cluster's Job %s ended", side.ns, side.job)
			}
		}
		end = fmt.Sprintf("both running, %d ranks reachable from rank 0", size)
	} else {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if failure != nil {
			seen := operatorFailed(t, opNS, opJob, *failure)
			jobComplete(t, ourNS, ourJob, completeLimit+sleeps(string(src)))
			checkAllExitedZero(t, ourNS, ourJob, size)
			logRules[failure.rule] = true
			who := "the operator's " + failure.container + " container"
			if failure.container == "" {
				who = "the operator makes no Job"
			}
			end = fmt.Sprintf("ours: Job complete %d/%d; %s: %q", size, size, who, seen)
			size = 0
		} else {
			jobComplete(t, opNS, opJob, completeLimit+sleeps(string(src)))
			jobComplete(t, ourNS, ourJob, completeLimit+sleeps(string(src)))
			checkAllExitedZero(t, opNS, opJob, size)
			checkAllExitedZero(t, ourNS, ourJob, size)
			end = fmt.Sprintf("both Jobs complete %d/%d, each rank's output the same", size, size)
		}
		logging, _ := spec["logging"].(map[string]any)
		quiet, _ := logging["quiet"].(bool)
		if !quiet && size > 0 {
			// Without logging.quiet both sides' scripts print their own progress, which differs
			// on purpose (D-scripts): only the end state is compared.
			end = fmt.Sprintf("both Jobs complete %d/%d; logs not compared (logging.quiet is off)", size, size)
			size = 0
		}
		for i := range size {
			index := fmt.Sprint(i)
			opLog := brokerLog(t, opNS, jobPod(t, opNS, opJob, index))
			// D-quiet-workers: the operator's worker ranks print their flux start line even with
			// logging.quiet; ours are quiet on every rank.
			if quiet && i > 0 {
				if kept := workerStartLine.ReplaceAllString(opLog, ""); kept != opLog {
					opLog = kept
					logRules["D-quiet-workers"] = true
				}
			}
			opLog = normalizeLog(opLog, opJob)
			ourLog := brokerLog(t, ourNS, jobPod(t, ourNS, ourJob, index))
			// D-join-report: our broker script says when its broker has not joined after 30 s; a
			// diagnostic, not the command's output. Kept visible in the test's log.
			if reports := joinReportLine.FindAllString(ourLog, -1); len(reports) > 0 {
				t.Logf("rank %s joined late; our broker script reported:\n%s", index, strings.Join(reports, ""))
				ourLog = joinReportLine.ReplaceAllString(ourLog, "")
				logRules["D-join-report"] = true
			}
			ourLog = normalizeLog(ourLog, ourJob)
			if opLog != ourLog {
				t.Errorf("rank %s's output differs:\noperator:\n%s\nours:\n%s", index, opLog, ourLog)
			}
		}
	}
	t.Logf("%s: end states reached %.1fs after the apply", name, time.Since(start).Seconds())
	if status != nil {
		*status = sampler.endState(t, interactive, brokers)
		t.Logf("%s: status side by side: %s", name, *status)
	}

	var why []string
	if failure != nil && failure.container == "" {
		// The operator made no broker Job: there is nothing to compare the objects with.
		why = rolesCompared(t, nil, nil, logRules)
	} else {
		opRoles, ourRoles := objectRoles(t, opNS, opJob), objectRoles(t, ourNS, ourJob)
		t.Logf("objects by role: operator %q; ours %q", opRoles, ourRoles)
		why = rolesCompared(t, opRoles, ourRoles, logRules)
	}
	if t.Failed() {
		return "different (the test's log has the reason)"
	}
	if len(why) == 0 {
		return "same: " + end
	}
	return "better: " + end + "; " + strings.Join(why, "; ")
}

// statusSampler reads, every second from the apply on, what each side says of one MiniCluster's
// state: our phase, from `minicluster-fn status -o json` as a user runs it, and the operator's
// MiniCluster conditions (pkg/job/conditions.go of the operator: JobRequested,
// JobWaitingForResources, JobMiniClusterReady, JobRunning, JobFinished). Each side's values are
// kept once each, in the order first seen.
type statusSampler struct {
	ourNS, opNS, instance string
	quit, done            chan struct{}
	stopOnce              sync.Once
	// ours and operator are the goroutine's until done is closed.
	ours, operator []string
}

func sampleStatus(ourNS, opNS, instance string) *statusSampler {
	s := &statusSampler{ourNS: ourNS, opNS: opNS, instance: instance, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			s.ours = appendChanged(s.ours, ourPhase(ourNS, instance))
			s.operator = appendChanged(s.operator, operatorConditions(opNS, instance))
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling and waits for its last read.
func (s *statusSampler) stop() {
	s.stopOnce.Do(func() { close(s.quit) })
	<-s.done
}

// endState stops the sampling once both sides reached their end state, and checks what status
// says then: Succeeded for a Job that completed (hello-world), Ready with every broker joined for a
// cluster that runs until deleted. The operator's conditions are recorded as they are, not
// checked. It returns the table's cell: the end state side by side, then the values each side
// went through.
func (s *statusSampler) endState(t *testing.T, persistent bool, size int) string {
	t.Helper()
	s.stop()
	milestone, want := "both Jobs complete", "Succeeded"
	if persistent {
		milestone, want = "all brokers joined", "Ready"
	}
	// Our row follows the broker pods' readiness, which comes about 0.1 s after a broker joined
	// (D-readiness), while rank 0 may have reached every rank already: a few seconds' grace.
	var row statusRow
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		rows, err := statusRows(s.ourNS, s.instance)
		if err != nil {
			t.Error(err)
			break
		}
		if len(rows) == 1 {
			row = rows[0]
		}
		if row.Phase == want && (!persistent || row.Joined == size) || time.Now().After(deadline) {
			break
		}
	}
	if row.Phase != want || persistent && row.Joined != size {
		t.Errorf("%s: status says %s %d/%d (%s); want %s", milestone, row.Phase, row.Joined, row.Size, row.Reason, want)
	}
	return fmt.Sprintf("%s: ours %s %d/%d, the operator's %s; from the apply on: ours %s; the operator's %s",
		milestone, row.Phase, row.Joined, row.Size, operatorConditions(s.opNS, s.instance),
		strings.Join(s.ours, " → "), strings.Join(s.operator, " → "))
}

// appendChanged appends v unless it is the last value of seen.
func appendChanged(seen []string, v string) []string {
	if len(seen) > 0 && seen[len(seen)-1] == v {
		return seen
	}
	return append(seen, v)
}

// ourPhase is our status phase of the MiniCluster, or what kept status from saying it.
func ourPhase(ns, instance string) string {
	rows, err := statusRows(ns, instance)
	switch {
	case err != nil:
		return "error: " + firstLine(err.Error())
	case len(rows) != 1:
		return fmt.Sprintf("%d rows", len(rows))
	}
	return string(rows[0].Phase)
}

// operatorConditions sums up the operator's MiniCluster's status.conditions: the types whose status
// is True, "none True" when all are False, or "no conditions".
func operatorConditions(ns, instance string) string {
	var mc struct {
		Status struct {
			Conditions []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
			} `json:"conditions"`
		} `json:"status"`
	}
	if err := getObject(&mc, ns, "miniclusters", instance); err != nil {
		return "error: " + firstLine(err.Error())
	}
	conditions := mc.Status.Conditions
	if len(conditions) == 0 {
		return "no conditions"
	}
	var on []string
	for _, c := range conditions {
		if c.Status == "True" {
			on = append(on, c.Type)
		}
	}
	if len(on) == 0 {
		return fmt.Sprintf("none of %d True", len(conditions))
	}
	return strings.Join(on, "+")
}

// applyBoth applies the MiniCluster to the operator in namespace op-<name> and our render of the
// file in ours-<name>, at once, as a user would see them on one node.
func applyBoth(t *testing.T, name, file string, mc map[string]any) (opNS, ourNS string) {
	t.Helper()
	opNS, ourNS = namespace(t, "op-"+name), namespace(t, "ours-"+name)
	manifest, err := json.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, manifest, "-n", opNS)
	apply(t, oursRendered(t, file, ourNS))
	return opNS, ourNS
}

// oursRendered is our render of the file (minicluster-fn render) put into namespace ns, with every
// image its stand-in: what applyBoth applies on our side.
func oursRendered(t testing.TB, file, ns string) []byte {
	t.Helper()
	return renderedBy(t, suite.fn, file, ns)
}

// renderedBy is oursRendered with the minicluster-fn binary fn.
func renderedBy(t testing.TB, fn, file, ns string) []byte {
	t.Helper()
	rendered, err := run(filepath.Dir(file), fn, "render", file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rendered.yaml"), rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	overlayIn(t, dir, ns, rendered, "rendered.yaml")
	return kustomizeBuild(t, dir)
}

// operatorMiniCluster is the MiniCluster as the operator gets it: the file as JSON (the API
// server's view of it), with every image the stand-in that replaces it on our side.
func operatorMiniCluster(t testing.TB, file string) (mc, spec map[string]any) {
	t.Helper()
	out := mustKube(t, nil, "create", "--dry-run=client", "-o", "json", "-f", file)
	if err := json.Unmarshal([]byte(out), &mc); err != nil {
		t.Fatalf("%s as JSON: %v", file, err)
	}
	// kubectl's client-side dry run fills in its default namespace; apply -n gives the real one.
	delete(mc["metadata"].(map[string]any), "namespace")
	spec, _ = mc["spec"].(map[string]any)
	containers, _ := spec["containers"].([]any)
	for _, c := range containers {
		c := c.(map[string]any)
		c["image"] = standIn(fmt.Sprint(c["image"]))
	}
	flux, ok := spec["flux"].(map[string]any)
	if !ok {
		flux = map[string]any{}
		spec["flux"] = flux
	}
	view, ok := flux["container"].(map[string]any)
	if !ok {
		view = map[string]any{}
		flux["container"] = view
	}
	image, _ := view["image"].(string)
	if image == "" {
		image = operatorDefaultView
	}
	view["image"] = standIn(image)
	return mc, spec
}

// operatorJob waits for the operator's broker Job (named after the MiniCluster) and returns its name.
func operatorJob(t *testing.T, ns, instance string) string {
	t.Helper()
	waitFor(t, "the operator's Job "+instance, time.Minute, func() (bool, string, error) {
		var j job
		err := getObject(&j, ns, "jobs", instance)
		if errors.Is(err, errNotFound) {
			return false, "", nil
		}
		return err == nil, "", err
	})
	return instance
}

func getJob(t *testing.T, ns, name string) job {
	t.Helper()
	var j job
	if err := getObject(&j, ns, "jobs", name); err != nil {
		t.Fatal(err)
	}
	return j
}

// operatorFailed waits until a container of the operator's broker pods logs the failure's
// evidence, and returns that line.
func operatorFailed(t *testing.T, ns, jobName string, f operatorFailure) string {
	t.Helper()
	var line string
	if f.container == "" {
		manager := filepath.Join(suite.state, "log", "flux-operator.log")
		waitFor(t, "the operator's manager to log "+strconv.Quote(f.evidence)+" for "+ns, runningLimit, func() (bool, string, error) {
			log, err := os.ReadFile(manager)
			for _, l := range strings.Split(string(log), "\n") {
				if strings.Contains(l, ns) && strings.Contains(l, f.evidence) {
					// The manager's JSON line: its error text is what a user would read.
					line = l
					if m := regexp.MustCompile(`"error": "((?:[^"\\]|\\.)*)"`).FindStringSubmatch(l); m != nil {
						line = strings.ReplaceAll(m[1], `\"`, `"`)
					}
					return true, "", nil
				}
			}
			return false, "", err
		})
		return line
	}
	waitFor(t, "the operator's "+f.container+" container to log "+strconv.Quote(f.evidence), runningLimit, func() (bool, string, error) {
		for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+jobName) {
			out, _ := kube(nil, "-n", ns, "logs", p.Metadata.Name, "-c", f.container)
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, f.evidence) {
					line = strings.TrimSpace(l)
					return true, "", nil
				}
			}
		}
		return false, podsState(t, ns, "batch.kubernetes.io/job-name="+jobName), nil
	})
	return line
}

// workerStartLine is the line the operator's worker ranks print before flux start.
var workerStartLine = regexp.MustCompile(`(?m)^🌀 flux start .*\n?`)

// joinReportLine is a line of our broker script's join watchdog: a broker that has not joined
// after 30 s (and every minute after) says so on stderr, and a worker then says how it reaches its
// parent broker.
var joinReportLine = regexp.MustCompile(`(?m)^\S+(?:(?:, the main broker: the instance has not started| has not joined the main broker) after \d+s \(broker state: [^)]*\);|: its parent broker is tcp://).*\n?`)

// Values that differ from run to run in any two logs: Flux job IDs, durations, clock times.
var (
	fluxJobID = regexp.MustCompile(`ƒ[1-9A-HJ-NP-Za-km-z]+|\bshell-f[1-9A-HJ-NP-Za-km-z]+`)
	duration  = regexp.MustCompile(`\b\d+(?:\.\d+)?s\b|\b\d+:\d{2}(?:\.\d+)?\b`)
)

// normalizeLog: a rank's log with the broker Job's name (in the pods' hostnames), Flux job IDs and
// durations replaced, and its lines sorted: tasks that run at once print in any order.
func normalizeLog(log, jobName string) string {
	log = strings.ReplaceAll(log, jobName, "<job>")
	log = fluxJobID.ReplaceAllString(log, "ƒ<id>")
	log = duration.ReplaceAllString(log, "<time>")
	var lines []string
	for _, line := range strings.Split(log, "\n") {
		if line = strings.TrimRight(line, " \t"); line != "" {
			lines = append(lines, line)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// objectRoles names what exists in the namespace by role, not by name: the broker Job, the
// headless Service, the entrypoint ConfigMap the broker pods mount, the certificate (ConfigMap
// or Secret), and anything else by its component label or kind.
func objectRoles(t *testing.T, ns, brokerJobName string) []string {
	t.Helper()
	var roles []string
	type item struct {
		Kind     string         `json:"kind"`
		Metadata objectMeta     `json:"metadata"`
		Type     string         `json:"type"`
		Data     map[string]any `json:"data"`
		Spec     map[string]any `json:"spec"`
	}
	var list struct {
		Items []item `json:"items"`
	}
	out := mustKube(t, nil, "-n", ns, "get", "jobs,services,configmaps,secrets,serviceaccounts,roles,rolebindings,pods", "-o", "json")
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	var brokerLabels []map[string]string
	for _, o := range list.Items {
		if o.Kind == "Pod" && o.Metadata.Labels["batch.kubernetes.io/job-name"] == brokerJobName {
			brokerLabels = append(brokerLabels, o.Metadata.Labels)
		}
	}
	for _, o := range list.Items {
		component := o.Metadata.Labels[labelComponent]
		switch {
		case o.Kind == "ConfigMap" && o.Metadata.Name == "kube-root-ca.crt",
			o.Kind == "ServiceAccount" && o.Metadata.Name == "default":
			// Every namespace has them.
		case o.Kind == "Pod":
			if o.Metadata.Labels["batch.kubernetes.io/job-name"] == brokerJobName {
				roles = append(roles, "broker Pod")
			} else if component != "" {
				roles = append(roles, component+" Pod")
			} else {
				roles = append(roles, "Pod "+o.Metadata.Name)
			}
		case o.Kind == "Job" && o.Metadata.Name == brokerJobName:
			roles = append(roles, "broker Job")
		case o.Kind == "Service":
			// By what it selects: broker pods (headless or not), or others.
			role := "Service " + o.Metadata.Name
			if selector, _ := o.Spec["selector"].(map[string]any); selectsAny(selector, brokerLabels) {
				role = "broker Service"
			}
			if o.Spec["clusterIP"] == "None" {
				role += " (headless)"
			}
			roles = append(roles, role)
		case o.Kind == "ConfigMap" || o.Kind == "Secret" && o.Data["curve.cert"] != nil:
			// One object may have both roles: the operator's entrypoint ConfigMap also holds the
			// certificate.
			var these []string
			if o.Data["curve.cert"] != nil {
				these = append(these, "certificate "+o.Kind)
			}
			if len(o.Data) > len(these) && mountedByBrokers(t, ns, brokerJobName, o.Metadata.Name) {
				these = append(these, "entrypoint ConfigMap")
			}
			if len(these) == 0 {
				these = append(these, o.Kind+" "+o.Metadata.Name)
			}
			roles = append(roles, these...)
		case component != "":
			roles = append(roles, component+" "+o.Kind)
		default:
			roles = append(roles, o.Kind+" "+o.Metadata.Name)
		}
	}
	// A role may have several objects (the pods): one entry each.
	slices.Sort(roles)
	return roles
}

// selectsAny: the selector (not empty) matches the labels of one of the pods.
func selectsAny(selector map[string]any, pods []map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for _, labels := range pods {
		matches := true
		for k, v := range selector {
			if labels[k] != fmt.Sprint(v) {
				matches = false
			}
		}
		if matches {
			return true
		}
	}
	return false
}

// mountedByBrokers: the broker Job's pod template mounts the ConfigMap.
func mountedByBrokers(t *testing.T, ns, jobName, configMap string) bool {
	t.Helper()
	out := mustKube(t, nil, "-n", ns, "get", "job", jobName, "-o", "jsonpath={.spec.template.spec.volumes[*].configMap.name}")
	return slices.Contains(strings.Fields(out), configMap)
}

// objectDifferences are the roles that differ between the sides on purpose, each with the rule of
// docs/differences-from-operator.md that says why: a role of the operator's that ours replaces,
// or (operator "") a role only ours has.
var objectDifferences = []struct{ operator, ours, rule string }{
	{"", "keygen Job", "D-keygen"},
	{"", "keygen Pod", "D-keygen"},
	{"", "keygen ServiceAccount", "D-keygen"},
	{"", "keygen Role", "D-keygen"},
	{"", "keygen RoleBinding", "D-keygen"},
	{"certificate ConfigMap", "certificate Secret", "D-curve-secret"},
	{"broker Service", "broker Service (headless)", "D-minimal-service"},
}

// rolesCompared compares the roles of both sides. A difference in objectDifferences adds its rule
// to rules; any other fails the test. It returns the rules, each checked to be in
// docs/differences-from-operator.md: why ours is better.
func rolesCompared(t *testing.T, op, ours []string, rules map[string]bool) []string {
	t.Helper()
	count := func(roles []string) map[string]int {
		m := map[string]int{}
		for _, r := range roles {
			m[r]++
		}
		return m
	}
	opN, ourN := count(op), count(ours)
	for _, d := range objectDifferences {
		if ourN[d.ours] == 0 || opN[d.ours] != 0 || (d.operator != "" && (opN[d.operator] == 0 || ourN[d.operator] != 0)) {
			continue
		}
		rules[d.rule] = true
		delete(ourN, d.ours)
		delete(opN, d.operator)
	}
	for _, role := range slices.Sorted(maps.Keys(ourN)) {
		if opN[role] != ourN[role] {
			t.Errorf("objects: %d %q on our side, %d on the operator's", ourN[role], role, opN[role])
		}
	}
	for _, role := range slices.Sorted(maps.Keys(opN)) {
		if ourN[role] == 0 {
			t.Errorf("objects: %d %q on the operator's side, none on ours", opN[role], role)
		}
	}
	docs, err := os.ReadFile(filepath.Join(suite.repo, "docs", "differences-from-operator.md"))
	if err != nil {
		t.Fatal(err)
	}
	var why []string
	for _, rule := range slices.Sorted(maps.Keys(rules)) {
		if !strings.Contains(string(docs), "`"+rule+"`") {
			t.Errorf("rule %s is not in docs/differences-from-operator.md", rule)
		}
		why = append(why, rule)
	}
	return why
}
