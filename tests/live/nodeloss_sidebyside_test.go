package live

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// nodeLossLimit bounds how long a side may take, from the power-off, to be whole again (or, for a
// batch MiniCluster, to reach what it does about the lost rank); nodeLossEndLimit how long after the
// node came back or its Node was deleted.
const (
	nodeLossLimit    = 5 * time.Minute
	nodeLossEndLimit = 3 * time.Minute
	// nodeLossMargin is how much later than the operator's ours may be whole again before the test
	// calls it later: a side's checks run every 2 s, and one check of a rank that does not answer
	// takes up to 30 s.
	nodeLossMargin = 30 * time.Second
)

// nodeLossCase is one case of TestNodeLossSideBySide.
type nodeLossCase struct {
	name string
	// file is the test MiniCluster (testdata): interactive (persistent) or failed-command (batch,
	// its command running on every rank when the node goes).
	file string
	// rank0 loses the node of rank 0, the main broker; otherwise the node of a worker.
	rank0 bool
	// deleted: the node never comes back and its Node is deleted, as an administrator does with a
	// machine that is gone; otherwise it is powered on again once both sides settled.
	deleted bool
	// beforeJoin: the node goes before the workers' brokers have joined (they start theirs
	// workerDelay after their pods, with the MiniCluster's commands.pre); otherwise once every rank
	// is reachable and, of ours, every broker joined.
	beforeJoin bool
}

// workerDelay is how long the workers of a beforeJoin case wait before they start their brokers:
// long enough for the power-off to come first, once every pod runs, and short enough for them to
// start while the main broker's name still resolves to its dead pod alone (the Job's new pod of
// rank 0 comes with the eviction, about 45 s after the power-off on the test cluster).
const workerDelay = 30 * time.Second

// TestNodeLossSideBySide (make test-all) does each node-loss case to a MiniCluster of size 3 run by
// the operator and to the same file rendered by us, on the same three added nodes with one power-off
// for both (tests/cluster/node.sh stop): the node runs the lost rank of both sides (the rank 0s
// share it, or it runs a worker of each). It follows both sides from the power-off (every 2 s: the lost pod marked for
// deletion, a new pod of its rank running, every rank reachable from rank 0 again, the Job's
// conditions, our status and the operator's conditions), then powers the node on again or deletes
// its Node, and follows both until the old pod is gone. Ours must be whole again wherever the
// operator's is, no later than it (nodeLossMargin), and stay whole once the node is back or gone;
// a batch MiniCluster of ours must read Failed, and its Job fail once the node is back or gone. The
// table is logged and written to bin/node-loss.md (docs/generated-objects.md has the figures).
func TestNodeLossSideBySide(t *testing.T) {
	exhaustive(t, "node loss side by side with the operator")
	t.Parallel()
	requireImages(t)
	needOperator(t)
	needNodes(t, 4)
	takeSlotAhead(t)
	// The names have no comma: a test's temporary directory is named after it, and kubectl -f
	// splits a path at commas.
	cases := []nodeLossCase{
		{name: "persistent worker lost then node back", file: "interactive"},
		{name: "persistent worker lost then Node deleted", file: "interactive", deleted: true},
		{name: "persistent rank 0 lost then node back", file: "interactive", rank0: true},
		{name: "persistent rank 0 lost then Node deleted", file: "interactive", rank0: true, deleted: true},
		{name: "persistent rank 0 lost before the workers joined then Node deleted", file: "interactive", rank0: true, deleted: true, beforeJoin: true},
		{name: "batch worker lost then node back", file: "failed-command"},
		{name: "batch worker lost then Node deleted", file: "failed-command", deleted: true},
	}
	var table strings.Builder
	table.WriteString("| case | side | lost pod marked for deletion | new pod of the rank running | every rank reachable again | Job | end | old pod gone | what the user read |\n|---|---|---|---|---|---|---|---|---|\n")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { table.WriteString(c.run(t, i)) })
	}
	t.Logf("node loss, side by side (seconds from the power-off):\n%s", table.String())
	if err := os.WriteFile(filepath.Join(suite.repo, "bin", "node-loss.md"), []byte(table.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// run does the case and returns its table rows.
func (c nodeLossCase) run(t *testing.T, i int) string {
	added := addedNodes(t)
	waitFor(t, "the added nodes Ready", 2*time.Minute, func() (bool, string, error) {
		ready := readyNodes(t)
		for _, n := range added {
			if !slices.Contains(ready, n) {
				return false, fmt.Sprintf("Ready: %v", ready), nil
			}
		}
		return true, "", nil
	})
	for _, n := range added {
		markTestNode(t, n)
	}
	dir := fnDir(t, c.file)
	onTestNodes(t, dir, true)
	setCommand(t, dir, "size: 2", "size: 3")
	if c.file == "failed-command" {
		// Never ends by itself within the test; -N3 puts a task on every rank.
		setCommand(t, dir, "command: COMMAND", "command: flux run -N3 -n3 sleep 600")
	}
	if c.beforeJoin {
		// The operator's field, which both run in every pod before its broker starts.
		setCommand(t, dir, "    - image: ubuntu:noble", fmt.Sprintf("    - image: ubuntu:noble\n      commands:\n        pre: '[ \"$JOB_COMPLETION_INDEX\" = 0 ] || sleep %.0f'", workerDelay.Seconds()))
	}
	file := filepath.Join(dir, "minicluster.yaml")
	mc, _ := operatorMiniCluster(t, file)
	instance := mc["metadata"].(map[string]any)["name"].(string)
	manifest, err := json.Marshal(mc)
	if err != nil {
		t.Fatal(err)
	}

	// Both spread as they are by default. The node that is powered off must run the lost rank of
	// both: for rank 0, the two MiniClusters are applied again, each to a new namespace (a new
	// Job: no failed pods, so no backoff, in its history), the operator's and ours in turn, until
	// the two rank 0s land on one node (the scheduler does not put the operator's rank 0 beside
	// ours by itself: seen 10 times in a row); for a worker, a node that runs neither side's rank 0
	// is taken.
	var ourNS, ourJob, opNS, opJob string
	var ourNodes, opNodes []string
	for attempt := 1; ; attempt++ {
		if attempt == 1 || attempt%2 == 0 {
			ourNS = namespace(t, fmt.Sprintf("ours-nl%d-%d", i, attempt))
			apply(t, oursRendered(t, file, ourNS))
			ourJob = brokerJob(t, ourNS, instance).Metadata.Name
			ourNodes = placed(t, ourNS, ourJob)
		}
		if attempt == 1 || attempt%2 == 1 {
			opNS = namespace(t, fmt.Sprintf("op-nl%d-%d", i, attempt))
			apply(t, manifest, "-n", opNS)
			opJob = operatorJob(t, opNS, instance)
			opNodes = placed(t, opNS, opJob)
		}
		if len(distinct(ourNodes)) == 3 && len(distinct(opNodes)) == 3 && (!c.rank0 || opNodes[0] == ourNodes[0]) {
			break
		}
		if attempt == 12 {
			t.Fatalf("after %d attempts, the operator's brokers on %v, ours on %v: the case needs them one per node and, for rank 0, the rank 0s on one node", attempt, opNodes, ourNodes)
		}
		t.Logf("the operator's brokers on %v, ours on %v: applying one again", opNodes, ourNodes)
		// The next attempt replaces ours when it is even, the operator's when it is odd.
		if (attempt+1)%2 == 0 {
			mustKube(t, nil, "delete", "namespace", ourNS, "--wait=false")
		} else {
			mustKube(t, nil, "delete", "namespace", opNS, "--wait=false")
		}
	}
	if c.beforeJoin {
		// Every pod runs (the workers in their commands.pre), and rank 0's broker has had a
		// moment to start; the workers' brokers have not.
		for _, s := range [][2]string{{ourNS, ourJob}, {opNS, opJob}} {
			waitFor(t, "the 3 pods of Job "+s[1]+" running", runningLimit, func() (bool, string, error) {
				var phases []string
				for _, p := range pods(t, s[0], "batch.kubernetes.io/job-name="+s[1]) {
					if p.Metadata.DeletionTimestamp == nil {
						phases = append(phases, p.Status.Phase)
					}
				}
				return len(phases) == 3 && !slices.ContainsFunc(phases, func(p string) bool { return p != "Running" }), fmt.Sprint(phases), nil
			})
		}
		time.Sleep(5 * time.Second)
	} else {
		for _, s := range [][2]string{{ourNS, ourJob}, {opNS, opJob}} {
			ranksReachable(t, s[0], s[1], 3, runningLimit)
		}
		// A MiniCluster that runs: every broker of ours joined (its rc1 done: a worker still in
		// rc1 when its main broker goes is what beforeJoin tries), which rank 0 reaching every
		// rank does not yet say.
		brokersReady(t, ourNS, instance, 3, runningLimit)
	}

	ranks := []string{"0"}
	if !c.rank0 {
		ranks = nil
		for r, n := range ourNodes[1:] {
			if n != opNodes[0] {
				ranks = append(ranks, fmt.Sprint(r+1))
			}
		}
	}
	lost := powerOffRank(t, ourNS, instance, ourJob, "node loss side by side: "+c.name, ranks...)
	off := time.Now()
	sides := []*sideWatch{
		watchSide("operator", opNS, opJob, instance, lost.node, off, false),
		watchSide("ours", ourNS, ourJob, instance, lost.node, off, true),
	}
	for _, s := range sides {
		t.Logf("%s: rank %s (pod %s) was on %s", s.name, s.lostRank, s.lostPod, lost.node)
		if c.rank0 != (s.lostRank == "0") {
			t.Fatalf("%s: the node %s ran rank %s; the case needs %s", s.name, lost.node, s.lostRank, ranks)
		}
	}
	defer func() {
		for _, s := range sides {
			s.stop()
		}
	}()
	op, ours := sides[0], sides[1]
	persistent := c.file == "interactive"

	// Until each side has done what it does about the lost rank: whole again; for a batch
	// MiniCluster of ours, status Failed (a failed command fails the Job), and for the operator's,
	// whole again (its command starts again) or its Job ended.
	settled := func(s *sideWatch) bool {
		if _, ok := s.at(evWhole); ok {
			return true
		}
		if !persistent && s.ours {
			_, ok := s.at("status Failed")
			return ok
		}
		return !persistent && s.jobEnded()
	}
	for time.Since(off) < nodeLossLimit && !(settled(op) && settled(ours)) {
		time.Sleep(2 * time.Second)
	}
	end := "node back"
	if c.deleted {
		end = "Node deleted"
		mustKube(t, nil, "delete", "node", lost.node)
	} else {
		lost.powerOn()
	}
	endAt := time.Since(off)
	for _, s := range sides {
		s.read(end)
	}
	t.Logf("%.1fs after the power-off: %s", endAt.Seconds(), end)
	endSettled := func(s *sideWatch) bool {
		_, gone := s.at(evOldGone)
		if s.ours && !persistent {
			_, failed := s.at("Job Failed")
			return gone && failed
		}
		return gone
	}
	for time.Since(off) < endAt+nodeLossEndLimit && !(endSettled(op) && endSettled(ours)) {
		time.Sleep(2 * time.Second)
	}
	wholeAfter := map[string]string{}
	if persistent {
		for _, s := range sides {
			ok, saw := reachableNow(s.ns, s.job, 3)
			wholeAfter[s.name] = map[bool]string{true: "whole", false: "not whole: " + firstLine(saw)}[ok]
		}
	}
	for _, s := range sides {
		s.stop()
	}
	if c.deleted {
		// For the node tests after this one: the machine on again registers a bare Node.
		lost.powerOn()
		markTestNode(t, lost.node)
	}

	if c.rank0 {
		// Where the time between the new main broker running and every rank reachable goes.
		for _, s := range sides {
			logRejoin(t, s, off)
		}
	}

	// What the case must show of ours.
	opWhole, opOK := op.at(evWhole)
	ourWhole, ourOK := ours.at(evWhole)
	if persistent {
		switch {
		case !ourOK && opOK:
			t.Errorf("the operator's cluster was whole again %.0f s after the power-off, ours not within %v", opWhole.Seconds(), nodeLossLimit)
		case !ourOK:
			t.Errorf("our cluster was not whole again within %v (nor the operator's)", nodeLossLimit)
		case opOK && ourWhole > opWhole+nodeLossMargin:
			t.Errorf("ours whole again %.0f s after the power-off, the operator's %.0f s: later by more than %v", ourWhole.Seconds(), opWhole.Seconds(), nodeLossMargin)
		}
		if wholeAfter["ours"] != "whole" {
			t.Errorf("after %s: ours %s", end, wholeAfter["ours"])
		}
	} else {
		if d, ok := ours.at("status Failed"); !ok || d > endAt {
			t.Errorf("our batch MiniCluster did not read Failed before the %s (%v)", end, ours.states())
		}
		if _, ok := ours.at("Job Failed"); !ok {
			t.Errorf("our Job did not fail within %v after the %s", nodeLossEndLimit, end)
		}
	}
	if _, ok := ours.at(evOldGone); !ok {
		t.Errorf("our old pod %s was not gone within %v after the %s", ours.lostPod, nodeLossEndLimit, end)
	}

	var rows strings.Builder
	for _, s := range sides {
		job := "—"
		for _, cond := range []string{"Failed", "Complete"} {
			if d, ok := s.at("Job " + cond); ok {
				job = fmt.Sprintf("%s %s", cond, secs(d))
			}
		}
		whole := "never"
		if d, ok := s.at(evWhole); ok {
			whole = secs(d)
		}
		if w, ok := wholeAfter[s.name]; ok {
			whole += fmt.Sprintf(" (after the end: %s)", w)
		}
		cell := func(event string) string {
			if d, ok := s.at(event); ok {
				return secs(d)
			}
			return "never"
		}
		line := fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s %s | %s | %s |\n", c.name, s.name, cell(evMarked), cell(evReplaced),
			whole, job, end, secs(endAt), cell(evOldGone), strings.Join(s.states(), " → "))
		t.Log(line)
		rows.WriteString(line)
		if d, ok := s.at(evWhole); ok {
			recordPhase("node loss side by side: "+c.name+": "+s.name+" whole again", d, "")
		}
	}
	return rows.String()
}

// distinct are the different names among names, sorted.
func distinct(names []string) []string { return slices.Compact(slices.Sorted(slices.Values(names))) }

// secs is a duration in whole seconds, for the table.
func secs(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

// placed waits until the Job's three pods are bound to nodes and returns their nodes by index.
func placed(t *testing.T, ns, jobName string) []string {
	t.Helper()
	on := make([]string, 3)
	waitFor(t, "the 3 pods of Job "+jobName+" on nodes", time.Minute, func() (bool, string, error) {
		clear(on)
		for _, p := range pods(t, ns, "batch.kubernetes.io/job-name="+jobName) {
			var i int
			if _, err := fmt.Sscan(p.index(), &i); err == nil && i < 3 && p.Metadata.DeletionTimestamp == nil {
				on[i] = p.Spec.NodeName
			}
		}
		return !slices.Contains(on, ""), fmt.Sprintf("on %v", on), nil
	})
	return on
}

// The events a sideWatch records.
const (
	evMarked   = "lost pod marked for deletion"
	evReplaced = "new pod of the rank running"
	evWhole    = "every rank reachable"
	evOldGone  = "old pod gone"
)

// sideWatch follows one side of a node-loss case from the power-off in a goroutine of its own:
// when each event was first seen, and what the user reads (our status's phase, the operator's
// conditions) as it changes. It never calls t.
type sideWatch struct {
	name, ns, job, instance string
	ours                    bool
	lostRank, lostPod       string
	lostUID                 string
	off                     time.Time

	mu    sync.Mutex
	seen  map[string]time.Duration
	said  []string
	last  string
	quit  chan struct{}
	done  chan struct{}
	once  sync.Once
	ended bool
}

// watchSide starts following the side whose pod on node is the lost one.
func watchSide(name, ns, job, instance, node string, off time.Time, ours bool) *sideWatch {
	s := &sideWatch{name: name, ns: ns, job: job, instance: instance, ours: ours, off: off,
		seen: map[string]time.Duration{}, quit: make(chan struct{}), done: make(chan struct{})}
	var l podList
	if err := listObjects(&l, ns, "pods", "batch.kubernetes.io/job-name="+job); err == nil {
		for _, p := range l.Items {
			if p.Spec.NodeName == node && p.Metadata.DeletionTimestamp == nil {
				s.lostRank, s.lostPod, s.lostUID = p.index(), p.Metadata.Name, p.Metadata.UID
			}
		}
	}
	// Three loops, so that a slow one does not delay the others' times: the pods and the Job; every
	// rank reachable (one check of a rank that does not answer takes up to 30 s); what the user
	// reads (status reads pod logs, which a dead node makes slow to answer).
	var wg sync.WaitGroup
	for _, sample := range []func(){s.sample, s.sampleWhole, s.sampleRead} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				sample()
				select {
				case <-s.quit:
					return
				case <-time.After(2 * time.Second):
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(s.done)
	}()
	return s
}

// sampleWhole records when every rank is reachable from rank 0 again, once a new pod of the lost
// rank runs.
func (s *sideWatch) sampleWhole() {
	if _, replaced := s.at(evReplaced); replaced {
		if _, whole := s.at(evWhole); !whole {
			if ok, _ := reachableNow(s.ns, s.job, 3); ok {
				s.mark(evWhole)
			}
		}
	}
}

// sampleRead records what the user reads: our status's phase, or the operator's conditions.
func (s *sideWatch) sampleRead() {
	if s.ours {
		s.read("status " + ourPhase(s.ns, s.instance))
	} else {
		s.read(operatorConditions(s.ns, s.instance))
	}
}

func (s *sideWatch) sample() {
	var l podList
	if err := listObjects(&l, s.ns, "pods", "batch.kubernetes.io/job-name="+s.job); err == nil {
		lostThere := false
		for _, p := range l.Items {
			if p.Metadata.UID == s.lostUID {
				lostThere = true
				if p.Metadata.DeletionTimestamp != nil {
					s.mark(evMarked)
				}
				continue
			}
			if p.index() == s.lostRank && p.Status.Phase == "Running" {
				s.mark(evReplaced)
			}
		}
		if !lostThere {
			s.mark(evOldGone)
		}
	}
	var j job
	if getObject(&j, s.ns, "jobs", s.job) == nil {
		for _, cond := range []string{"Failed", "Complete"} {
			if st, _ := j.condition(cond); st == "True" {
				s.mark("Job " + cond)
				s.mu.Lock()
				s.ended = true
				s.mu.Unlock()
			}
		}
	}
}

// mark records when the event was first seen.
func (s *sideWatch) mark(event string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[event]; !ok {
		s.seen[event] = time.Since(s.off)
	}
}

// read records what the user reads (or what happened to the node) each time it changes, and when
// it was first read.
func (s *sideWatch) read(what string) {
	s.mark(what)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != what {
		s.last = what
		s.said = append(s.said, fmt.Sprintf("%s (%s)", what, secs(time.Since(s.off))))
	}
}

// at is when the event was first seen, since the power-off.
func (s *sideWatch) at(event string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.seen[event]
	return d, ok
}

// states is what the user read, in order, with when it was first read.
func (s *sideWatch) states() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.said)
}

func (s *sideWatch) jobEnded() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// stop ends the watch and waits for its last sample.
func (s *sideWatch) stop() {
	s.once.Do(func() { close(s.quit) })
	<-s.done
}

// logRejoin logs, for each broker pod of the side that runs now, the lines of its log since the
// power-off that tell how it rejoined (the main broker's, flux's overlay and state machine), each
// with its time from the power-off.
func logRejoin(t *testing.T, s *sideWatch, off time.Time) {
	t.Helper()
	keep := []string{"main broker", "rejoin", "overlay", "state-machine", "quorum", "goodbye", "joined"}
	for _, p := range pods(t, s.ns, "batch.kubernetes.io/job-name="+s.job) {
		if p.Metadata.DeletionTimestamp != nil || len(p.Status.ContainerStatuses) == 0 {
			continue
		}
		out, err := kube(nil, "-n", s.ns, "logs", p.Metadata.Name, "-c", p.Status.ContainerStatuses[0].Name, "--timestamps",
			"--since-time="+off.UTC().Format(time.RFC3339))
		if err != nil {
			t.Logf("%s: logs of %s: %v", s.name, p.Metadata.Name, err)
			continue
		}
		var lines []string
		for _, line := range strings.Split(out, "\n") {
			stamp, text, ok := strings.Cut(line, " ")
			at, err := time.Parse(time.RFC3339Nano, stamp)
			if !ok || err != nil || !slices.ContainsFunc(keep, func(k string) bool { return strings.Contains(text, k) }) {
				continue
			}
			lines = append(lines, fmt.Sprintf("%6.1fs %s", at.Sub(off).Seconds(), text))
		}
		if len(lines) > 40 {
			lines = append(lines[:20], append([]string{"..."}, lines[len(lines)-20:]...)...)
		}
		t.Logf("%s: rank %s (pod %s on %s), since the power-off:\n%s", s.name, p.index(), p.Metadata.Name, p.Spec.NodeName, strings.Join(lines, "\n"))
	}
}
