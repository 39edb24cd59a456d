package live

import (
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

// TestCorpus runs every MiniCluster of the corpus (../shared/corpus/flux-operator-examples) whose
// images can be swapped for the local stand-ins and whose command can run here, rendered with
// `minicluster-fn render` and applied through a kustomize images overlay. It keeps a table of what
// ran and what was skipped, and why (logged, and written to bin/live-corpus.md).
func TestCorpus(t *testing.T) {
	// The whole corpus takes about 15 minutes on a loaded 2-core VM (docs/testing.md): it runs by
	// default; MINICLUSTER_FN_LIVE_CORPUS=0 leaves it out of a quick run by hand.
	if os.Getenv("MINICLUSTER_FN_LIVE_CORPUS") == "0" {
		t.Skip("SKIPPED, NOT PASSED: MINICLUSTER_FN_LIVE_CORPUS=0 leaves the corpus out")
	}
	t.Parallel()
	requireImages(t)
	dir := envOr("MINICLUSTER_FN_CORPUS", filepath.Join(suite.repo, "..", "shared", "corpus", "flux-operator-examples"))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("SKIPPED: the corpus is not at %s (../shared is absent)", dir)
	}
	files := corpusFiles(t, dir)

	var mu sync.Mutex
	rows := map[string]string{}
	record := func(rel, outcome string) {
		mu.Lock()
		defer mu.Unlock()
		rows[rel] = outcome
	}
	t.Run("files", func(t *testing.T) {
		for _, file := range files {
			rel, _ := filepath.Rel(dir, file)
			t.Run(rel, func(t *testing.T) {
				src, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if why := cannotRunHere(string(src)); why != "" {
					record(rel, "skipped: "+why)
					t.Skip(why)
				}
				file, src := cutSleeps(t, file, src)
				rendered, err := run(filepath.Dir(file), suite.fn, "render", file)
				if err != nil {
					record(rel, "skipped: does not render: "+firstLine(err.Error()))
					t.Skipf("does not render (the render tests cover this): %v", err)
				}
				t.Parallel()
				takeSlot(t)
				// A failure ends the test at once (t.Fatal): the deferred record still names
				// the step it failed in.
				step, outcome := "rendering", ""
				defer func() {
					switch {
					case t.Failed() && outcome == "":
						outcome = "FAILED while " + step + " (the test's log has the reason and the pods' logs)"
					case t.Failed():
						outcome = "FAILED: " + outcome
					}
					record(rel, outcome)
				}()
				outcome = runCorpusFile(t, rel, src, rendered, &step)
			})
		}
	})

	var table strings.Builder
	table.WriteString("| corpus file | outcome |\n|---|---|\n")
	ran, failed := 0, 0
	for _, file := range files {
		rel, _ := filepath.Rel(dir, file)
		if !strings.HasPrefix(rows[rel], "skipped") {
			ran++
		}
		if strings.HasPrefix(rows[rel], "FAILED") {
			failed++
		}
		fmt.Fprintf(&table, "| %s | %s |\n", rel, rows[rel])
	}
	fmt.Fprintf(&table, "\n%d of %d files ran on the live cluster, %d of them failed.\n", ran, len(files), failed)
	t.Logf("corpus on the live cluster:\n%s", table.String())
	if err := os.WriteFile(filepath.Join(suite.repo, "bin", "live-corpus.md"), []byte(table.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// corpusFiles lists the corpus's MiniCluster files (*.yaml under dir), sorted.
func corpusFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// namespaceFor is a namespace name (without namespace's "live-") for a corpus file: the prefix
// and the file's path, within the length a namespace may have.
func namespaceFor(prefix, rel string) string {
	ns := prefix + "-" + strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(strings.TrimSuffix(rel, ".yaml")), "-"), "-")
	if len(ns) > 52 {
		ns = strings.TrimRight(ns[:52], "-")
	}
	return ns
}

// What the stand-in application image (Debian minbase with Python) can run.
var standInCommands = []string{"echo", "df", "ls", "flux", "sleep", "hostname", "cat", "true"}

var (
	imageField      = regexp.MustCompile(`(?m)^\s*(?:- )?image: *["']?([^"'\s]+)`)
	workingDirField = regexp.MustCompile(`(?m)^\s*workingDir: *["']?([^"'\s]+)`)
	commandField    = regexp.MustCompile(`(?m)^(\s*)command: *(.*)$`)
	networkTools    = regexp.MustCompile(`\b(dnf|apt-get|yum|git clone|pip install|curl|wget)\b`)
	commentLine     = regexp.MustCompile(`(?m)^\s*#.*$`)
	externalVolume  = regexp.MustCompile(`(?m)^\s*(hostPath|claimName|secretName|configMapName|storageClass):`)
)

// cannotRunHere says why a corpus MiniCluster cannot run on the live cluster ("" if it can),
// from its text: the reasons are about this machine and the stand-in images, not the function.
func cannotRunHere(src string) string {
	src = commentLine.ReplaceAllString(src, "")
	if strings.Contains(src, "brokerConfig:") {
		return "its brokerConfig hard-codes hosts of Service flux-service in namespace default"
	}
	if m := externalVolume.FindStringSubmatch(src); m != nil {
		return "needs a volume this cluster lacks (" + m[1] + ")"
	}
	for _, m := range imageField.FindAllStringSubmatch(src, -1) {
		name := imageName(m[1])
		if strings.Contains(name, "flux-view") || name == "ubuntu" || name == "rockylinux" {
			continue
		}
		return "application image " + m[1] + ": its software is not in the Debian stand-in"
	}
	if m := workingDirField.FindStringSubmatch(src); m != nil && m[1] != "/tmp" && m[1] != "/" {
		return "workingDir " + m[1] + " does not exist in the stand-in"
	}
	if m := networkTools.FindStringSubmatch(src); m != nil {
		return "needs the network (" + m[1] + "), which this cluster does not have"
	}
	blocks := containerBlocks(src)
	for _, block := range blocks {
		// A container that runs flux has its command split into words and run by flux; any other
		// (a sidecar) runs its command as shell code.
		runsFlux := len(blocks) == 1 || runFluxField.MatchString(block)
		for _, cmd := range commands(block) {
			if runsFlux && strings.ContainsAny(cmd, "|;&") {
				return "command " + strconv.Quote(cmd) + " uses shell operators, which a command does not run (commands.script does)"
			}
			for _, part := range shellCommands.Split(cmd, -1) {
				if f := strings.Fields(part); len(f) > 0 && !slices.Contains(standInCommands, f[0]) {
					return "command " + f[0] + " is not in the stand-in"
				}
			}
		}
	}
	return ""
}

var (
	runFluxField  = regexp.MustCompile(`(?m)^\s*runFlux: *true`)
	shellCommands = regexp.MustCompile(`&&|\|\||[;|&]`)
	containersKey = regexp.MustCompile(`(?m)^(\s*)containers:\s*$`)
	listItem      = regexp.MustCompile(`^(\s*)- `)
)

// containerBlocks splits spec.containers into the text of each container.
func containerBlocks(src string) []string {
	loc := containersKey.FindStringSubmatchIndex(src)
	if loc == nil {
		return nil
	}
	keyIndent := loc[3] - loc[2]
	var blocks []string
	itemIndent := -1
	for _, line := range strings.Split(src[loc[1]:], "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if m := listItem.FindStringSubmatch(line); m != nil && (itemIndent < 0 || len(m[1]) == itemIndent) {
			itemIndent = len(m[1])
			blocks = append(blocks, "")
		} else if indent <= keyIndent || len(blocks) == 0 {
			break
		}
		blocks[len(blocks)-1] += line + "\n"
	}
	return blocks
}

// commands lists the lines of every container command (block scalars line by line).
func commands(src string) []string {
	var out []string
	lines := strings.Split(src, "\n")
	for i, line := range lines {
		m := commandField.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if v := strings.TrimSpace(m[2]); v != "|" && v != ">" && v != "|-" {
			out = append(out, v)
			continue
		}
		for _, next := range lines[i+1:] {
			if strings.TrimSpace(next) == "" {
				continue
			}
			if len(next)-len(strings.TrimLeft(next, " ")) <= len(m[1]) {
				break
			}
			out = append(out, strings.TrimSpace(next))
		}
	}
	return out
}

// runCorpusFile applies one rendered corpus MiniCluster in its own namespace and checks it: a
// command cluster completes with every pod exiting 0 (and rank 0 prints the expected output when
// the corpus has a test.out.correct); a persistent one has every rank reachable from rank 0.
func runCorpusFile(t *testing.T, rel string, src, rendered []byte, step *string) string {
	t.Helper()
	ns := namespace(t, namespaceFor("corpus", rel))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rendered.yaml"), rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	overlayIn(t, dir, ns, rendered, "rendered.yaml")
	manifests := kustomizeBuild(t, dir)
	checkNoRemoteImages(t, manifests)
	instance := metadataName(string(src))
	size := 1
	if m := regexp.MustCompile(`(?m)^  size: *(\d+)`).FindStringSubmatch(string(src)); m != nil {
		size, _ = strconv.Atoi(m[1])
	}
	start := time.Now()
	*step = "applying"
	apply(t, manifests)
	*step = "waiting for the certificate"
	certificate(t, ns, instance)
	j := brokerJob(t, ns, instance)

	if regexp.MustCompile(`(?m)^  interactive: *true`).Match(src) {
		*step = "waiting for the broker pods to run"
		brokersRunning(t, ns, instance, size, runningLimit)
		*step = "reaching every rank from rank 0"
		ranksReachable(t, ns, j.Metadata.Name, size, rejoinLimit)
		return fmt.Sprintf("ran: persistent, %d ranks reachable from rank 0 after %.0fs", size, time.Since(start).Seconds())
	}
	*step = "waiting for the Job to complete"
	jobComplete(t, ns, j.Metadata.Name, completeLimit+sleeps(string(src)))
	*step = "checking the pods' exit codes and output"
	checkAllExitedZero(t, ns, j.Metadata.Name, size)
	outcome := fmt.Sprintf("ran: Job complete %d/%d after %.0fs", size, size, time.Since(start).Seconds())
	expected, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Join(envOr("MINICLUSTER_FN_CORPUS",
		filepath.Join(suite.repo, "..", "shared", "corpus", "flux-operator-examples")), rel)), "test.out.correct"))
	if err == nil {
		log := brokerLog(t, ns, rankPod(t, ns, instance, "0"))
		for _, line := range strings.Split(strings.TrimSpace(string(expected)), "\n") {
			if !strings.Contains(log, strings.TrimSpace(line)) {
				t.Errorf("rank 0's log lacks %q of test.out.correct:\n%s", line, log)
			}
		}
		outcome += ", output as in test.out.correct"
	}
	return outcome
}

var sleepCommand = regexp.MustCompile(`\bsleep +(\d+)\b`)

// corpusSleepLimit bounds the sleeps the corpus's commands ask for. tests/flux-sidecar's main
// container sleeps 200 s only so that the instance still runs when its sidecar, after `sleep 10`,
// lists the jobs: 30 s does that too, and the test waits 170 s less for the same checks.
const corpusSleepLimit = 30

// cutSleeps is file and its text src or, when a command sleeps longer than corpusSleepLimit
// seconds, a copy of it (in a temporary directory) with those sleeps cut to the limit.
func cutSleeps(t *testing.T, file string, src []byte) (string, []byte) {
	t.Helper()
	cut := sleepCommand.ReplaceAllStringFunc(string(src), func(m string) string {
		if n, _ := strconv.Atoi(sleepCommand.FindStringSubmatch(m)[1]); n > corpusSleepLimit {
			return "sleep " + strconv.Itoa(corpusSleepLimit)
		}
		return m
	})
	if cut == string(src) {
		return file, src
	}
	copied := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(copied, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: sleeps longer than %d s cut to %d s", file, corpusSleepLimit, corpusSleepLimit)
	return copied, []byte(cut)
}

// sleeps is how long the commands sleep in all (tests/flux-sidecar sleeps 200 s): the Job's wait
// limit grows by that.
func sleeps(src string) time.Duration {
	var total time.Duration
	for _, cmd := range commands(commentLine.ReplaceAllString(src, "")) {
		for _, m := range sleepCommand.FindAllStringSubmatch(cmd, -1) {
			n, _ := strconv.Atoi(m[1])
			total += time.Duration(n) * time.Second
		}
	}
	return total
}

var nameField = regexp.MustCompile(`(?m)^metadata:\s*\n(?:\s+.*\n)*?\s+name: *["']?([^"'\s]+)`)

func metadataName(src string) string {
	if m := nameField.FindStringSubmatch(src); m != nil {
		return m[1]
	}
	return "flux-sample"
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
