package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/impact"
)

// The upgrade guard (docs/releasing.md, "The upgrade guard"): the renders of the examples by the
// last release are recorded under lastReleaseDir; each change's renders are
// compared with them by diff's impact logic (impact.RenderedSets and impact.Compare, what
// `diff --rendered` runs). A change that would make an upgrade replace a broker Job (a running
// MiniCluster restarts, a completed one runs again), give a MiniCluster a new certificate, remove
// its objects, or no longer render a file fails make check, unless CHANGELOG.md's Unreleased
// section declares that impact under "### Upgrade impact".

var updateLastRelease = flag.Bool("update-last-release", false,
	"record the current renders as the last release's, under "+lastReleaseDir+" (when cutting a release: docs/releasing.md)")

const lastReleaseDir = "testdata/last-release"

// upgradeImpacts are the impacts that an upgrade must not have unless the changelog declares
// them, by the slug that declares them.
var upgradeImpacts = map[string]string{
	impact.Replaced.Slug():       "the broker Job is replaced: a running MiniCluster restarts, a completed one runs its command again",
	impact.NewCertificate.Slug(): "the brokers get a new certificate: every broker restarts with a new key",
	impact.Removed.Slug():        "its objects are pruned",
	noLongerRenders:              "it no longer renders: the engine stops syncing it",
}

const noLongerRenders = "no-longer-renders"

// upgradeInput is a MiniCluster file the guard renders, by its key in lastReleaseDir.
type upgradeInput struct{ key, path string }

// upgradeInputs are the examples' MiniCluster files. The corpus's renders are not recorded: its
// files must not be committed, not even as renders under their paths; TestUpgradeGuardCorpus
// renders them with the last release itself.
func upgradeInputs(t *testing.T, root string) []upgradeInput {
	t.Helper()
	var inputs []upgradeInput
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if regexp.MustCompile(`(?m)^kind: MiniCluster\s*$`).Match(b) {
			rel, _ := filepath.Rel(root, p)
			inputs = append(inputs, upgradeInput{filepath.ToSlash(rel), p})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no MiniCluster file under examples/")
	}
	return inputs
}

// renderFingerprints renders each input with the binary, in parallel, and returns its
// fingerprint by key; an input that does not render has none.
func renderFingerprints(t *testing.T, fnBin string, inputs []upgradeInput) map[string][]byte {
	t.Helper()
	out := make([][]byte, len(inputs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, in := range inputs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			res := run(t, nil, "", fnBin, "render", in.path)
			if res.code != 0 {
				return
			}
			fp, err := fingerprint(res.stdout)
			if err != nil {
				t.Errorf("%s: %v", in.key, err)
				return
			}
			out[i] = fp
		})
	}
	wg.Wait()
	fps := map[string][]byte{}
	for i, in := range inputs {
		if out[i] != nil {
			fps[in.key] = out[i]
		}
	}
	return fps
}

// fingerprint is a render with every string it holds replaced by a digest of it, but for the
// objects' identity (apiVersion, kind, metadata) and names (values of name, secretName,
// claimName, serviceAccountName, subdomain, serviceName: the references between objects). Two
// fingerprints differ where the renders do, and impact classifies them as it classifies the
// renders, while the record holds none of the MiniClusters' text (commands,
// images, scripts), which the repository must not copy.
func fingerprint(render []byte) ([]byte, error) {
	var out bytes.Buffer
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(render)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := sigsyaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if obj == nil {
			continue
		}
		for k, v := range obj {
			if k != "apiVersion" && k != "kind" && k != "metadata" {
				obj[k] = digestStrings(v)
			}
		}
		b, err := sigsyaml.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
}

var nameKeys = []string{"name", "secretName", "claimName", "serviceAccountName", "subdomain", "serviceName"}

func digestStrings(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && slices.Contains(nameKeys, k) {
				v[k] = s
				continue
			}
			v[k] = digestStrings(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = digestStrings(e)
		}
		return v
	case string:
		return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(v)))[:23]
	}
	return v
}

// upgradeProblem is a MiniCluster that an upgrade would change in a way the changelog must
// declare.
type upgradeProblem struct {
	key, miniCluster, slug, detail string
}

// upgradeProblems compares the current fingerprints with the last release's, input by input (the
// inputs' MiniClusters share names, each file stands alone), and returns what the guard watches
// for. Inputs the last release did not render are new: nothing to upgrade.
func upgradeProblems(last, current map[string][]byte, keys []string) ([]upgradeProblem, error) {
	var problems []upgradeProblem
	for _, key := range keys {
		before, ok := last[key]
		if !ok {
			continue
		}
		after, ok := current[key]
		if !ok {
			problems = append(problems, upgradeProblem{key, "", noLongerRenders, "the last release rendered it; this code refuses it"})
			continue
		}
		old, err := impact.RenderedSets([]impact.RenderedFile{{Path: key, Data: before}})
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", lastReleaseDir, key, err)
		}
		new, err := impact.RenderedSets([]impact.RenderedFile{{Path: key, Data: after}})
		if err != nil {
			return nil, fmt.Errorf("%s (current render): %w", key, err)
		}
		for _, r := range impact.Compare(old, new) {
			if _, watched := upgradeImpacts[r.Impact.Slug()]; watched {
				problems = append(problems, upgradeProblem{key, r.ID(), r.Impact.Slug(), r.Effect})
			}
		}
	}
	return problems, nil
}

// declaredUpgradeImpacts reads the impacts that CHANGELOG.md's Unreleased section declares: the
// items of its "### Upgrade impact" list, each starting with an impact's slug in backquotes
// ("- `replaced` every MiniCluster: ...").
func declaredUpgradeImpacts(changelog string) ([]string, error) {
	_, rest, ok := strings.Cut(changelog, "\n## [Unreleased]\n")
	if !ok {
		return nil, errors.New("CHANGELOG.md has no \"## [Unreleased]\" section")
	}
	unreleased, _, _ := strings.Cut(rest, "\n## [")
	_, list, ok := strings.Cut(unreleased, "\n### Upgrade impact\n")
	if !ok {
		return nil, nil
	}
	list, _, _ = strings.Cut(list, "\n### ")
	var slugs []string
	for _, m := range regexp.MustCompile("(?m)^- `([a-z-]+)`").FindAllStringSubmatch(list, -1) {
		if _, known := upgradeImpacts[m[1]]; !known {
			return nil, fmt.Errorf("CHANGELOG.md, Unreleased, Upgrade impact: unknown impact `%s`: one of %s", m[1], strings.Join(slices.Sorted(maps.Keys(upgradeImpacts)), ", "))
		}
		slugs = append(slugs, m[1])
	}
	return slugs, nil
}

// upgradeGuard fails on the problems whose impact the changelog does not declare, naming the
// MiniClusters and pointing at CHANGELOG.md.
func upgradeGuard(lastVersion string, problems []upgradeProblem, changelog string) error {
	declared, err := declaredUpgradeImpacts(changelog)
	if err != nil {
		return err
	}
	var lines []string
	undeclared := map[string]bool{}
	for _, p := range problems {
		if slices.Contains(declared, p.slug) {
			continue
		}
		undeclared[p.slug] = true
		what := p.key
		if p.miniCluster != "" {
			what += ": MiniCluster " + p.miniCluster
		}
		lines = append(lines, fmt.Sprintf("  %s: %s (%s)", what, p.slug, p.detail))
	}
	if len(lines) == 0 {
		return nil
	}
	var slugs []string
	for _, s := range slices.Sorted(maps.Keys(upgradeImpacts)) {
		if undeclared[s] {
			slugs = append(slugs, "`"+s+"`")
		}
	}
	return fmt.Errorf("upgrading from %s to this code, with no edit of the MiniClusters, would restart or change running clusters:\n%s\n"+
		"Running MiniClusters would restart (completed ones run again) when users upgrade. Keep the render of an unchanged MiniCluster "+
		"the same, or declare it in CHANGELOG.md: under \"## [Unreleased]\", a \"### Upgrade impact\" item per impact, starting with %s, "+
		"that says which MiniClusters change and how (docs/releasing.md, \"The upgrade guard\")",
		lastVersion, strings.Join(lines, "\n"), strings.Join(slugs, ", "))
}

// lastRelease is what lastReleaseDir records of the last release.
type lastRelease struct {
	version, commit string
	renders         map[string][]byte // fingerprints of the examples' renders, by key
}

func readLastRelease(t *testing.T, dir string) lastRelease {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("no record of the last release's renders (%v): go test ./tests/e2e -run '^TestUpgrade' -args -update-last-release", err)
		}
		return strings.TrimSpace(string(b))
	}
	last := lastRelease{version: read("VERSION"), commit: read("COMMIT"), renders: map[string][]byte{}}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.Join(dir, "VERSION") || p == filepath.Join(dir, "COMMIT") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		last.renders[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return last
}

// guardUpgrade compares current with before, key by key, and fails the test on what the
// changelog does not declare.
func guardUpgrade(t *testing.T, version string, before, current map[string][]byte, keys []string) {
	t.Helper()
	problems, err := upgradeProblems(before, current, keys)
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(filepath.Join(repoRoot(t), "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := upgradeGuard(version, problems, string(changelog)); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MiniCluster files compared with the renders of %s: %d restarting changes, each declared in CHANGELOG.md", len(keys), version, len(problems))
}

// TestUpgradeGuard: this code's renders of the examples against the last
// release's.
func TestUpgradeGuard(t *testing.T) {
	fnBin := fnBinary(t)
	inputs := upgradeInputs(t, repoRoot(t))
	current := renderFingerprints(t, fnBin, inputs)
	dir := filepath.Join(repoRoot(t), "tests", "e2e", lastReleaseDir)
	if *updateLastRelease {
		recordLastRelease(t, fnBin, dir, current)
		return
	}
	last := readLastRelease(t, dir)
	var keys []string
	for _, in := range inputs {
		keys = append(keys, in.key)
	}
	guardUpgrade(t, last.version, last.renders, current, keys)
}

// TestUpgradeGuardCorpus: the guard on the operator's example corpus, whose files the repository
// must not copy, not even as renders: the last release renders them itself, built from the commit
// lastReleaseDir/COMMIT names (lastReleaseBinary). Each corpus file is rendered by the last release
// and by this code, and compared as TestUpgradeGuard compares the examples.
func TestUpgradeGuardCorpus(t *testing.T) {
	if *updateLastRelease {
		t.Skip("SKIPPED: the corpus's renders are not recorded (the last release renders them when the guard runs)")
	}
	fnBin := fnBinary(t)
	corpus, files := corpusFiles(t)
	last := readLastRelease(t, filepath.Join(repoRoot(t), "tests", "e2e", lastReleaseDir))
	lastBin := lastReleaseBinary(t, last)
	var inputs []upgradeInput
	var keys []string
	for _, f := range files {
		rel, _ := filepath.Rel(corpus, f)
		inputs = append(inputs, upgradeInput{"corpus/" + filepath.ToSlash(rel), f})
		keys = append(keys, inputs[len(inputs)-1].key)
	}
	before := renderFingerprints(t, lastBin, inputs)
	if len(before) < minCorpusSuccesses {
		t.Fatalf("the last release (%s) rendered %d of %d corpus files, want at least %d", last.version, len(before), len(files), minCorpusSuccesses)
	}
	guardUpgrade(t, last.version, before, renderFingerprints(t, fnBin, inputs), keys)
}

// lastReleaseBinary returns the last release's minicluster-fn, built from its commit's source
// (git archive; the Go module proxy for what the module cache lacks) once per machine and kept
// in the user's cache directory by commit. Before it is kept, it must render the release's own
// examples to the fingerprints lastReleaseDir records: a COMMIT that names another source fails
// here, not in a comparison against the wrong release.
func lastReleaseBinary(t *testing.T, last lastRelease) string {
	t.Helper()
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(last.commit) {
		t.Fatalf("%s/COMMIT: %q is not a full commit hash", lastReleaseDir, last.commit)
	}
	cacheRoot, err := os.UserCacheDir()
	if err != nil {
		cacheRoot = t.TempDir()
	}
	cached := filepath.Join(cacheRoot, "minicluster-fn-tests", "last-release", last.commit, "minicluster-fn")
	if fi, err := os.Stat(cached); err == nil && fi.Mode().IsRegular() {
		return cached
	}

	src := t.TempDir()
	tarball := filepath.Join(t.TempDir(), "source.tar")
	if res := run(t, nil, "", "git", "-C", repoRoot(t), "archive", "--format=tar", "-o", tarball, last.commit); res.code != 0 {
		// A shallow clone cannot hold an earlier commit; a full one must hold the release's.
		if shallow := run(t, nil, "", "git", "-C", repoRoot(t), "rev-parse", "--is-shallow-repository"); strings.TrimSpace(string(shallow.stdout)) == "true" {
			t.Skipf("SKIPPED, NOT RUN: this clone is shallow and lacks commit %s, the last release's source (%s/COMMIT): git fetch --unshallow", last.commit, lastReleaseDir)
		}
		t.Fatalf("the last release's source, commit %s (%s/COMMIT), is not in this clone: %s(a shallow clone: git fetch --unshallow)", last.commit, lastReleaseDir, res.stderr)
	}
	if res := run(t, nil, "", "tar", "-xf", tarball, "-C", src); res.code != 0 {
		t.Fatalf("tar -xf %s: %s", tarball, res.stderr)
	}
	built := filepath.Join(src, "minicluster-fn")
	const versionPkg = modulePath + "/internal/version"
	res := runEnv(t, nil, src, append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false"),
		"go", "build", "-trimpath", "-ldflags", "-X "+versionPkg+".Version="+last.version+" -X "+versionPkg+".Commit="+last.commit,
		"-o", built, "./cmd/minicluster-fn")
	if res.code != 0 {
		t.Fatalf("building %s from commit %s: %s", last.version, last.commit, res.stderr)
	}
	if got := renderFingerprints(t, built, upgradeInputs(t, src)); !maps.EqualFunc(got, last.renders, bytes.Equal) {
		t.Fatalf("minicluster-fn built from commit %s (%s/COMMIT) does not render its own examples as %s records them for %s: COMMIT must name the commit the renders were recorded from",
			last.commit, lastReleaseDir, lastReleaseDir, last.version)
	}
	b, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := cached + ".tmp-" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, cached); err != nil {
		t.Fatal(err)
	}
	return cached
}

// recordLastRelease writes the fingerprints as the last release's renders, with the version the
// binary says.
func recordLastRelease(t *testing.T, fnBin, dir string, fps map[string][]byte) {
	t.Helper()
	v := run(t, nil, "", fnBin, "version", "-o", "json")
	var info struct{ Version, Commit string }
	if err := sigsyaml.Unmarshal(v.stdout, &info); err != nil || info.Version == "" {
		t.Fatalf("%s version -o json: %v\n%s", fnBin, err, v.stdout)
	}
	if strings.HasSuffix(info.Version, "-dev") {
		t.Fatalf("%s is a development build (%s): record the renders of a release, built with make build VERSION=vX.Y.Z", fnBin, info.Version)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for key, fp := range fps {
		p := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, fp, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if info.Commit == "" {
		t.Fatalf("%s does not say its commit: build it with make build VERSION=%s", fnBin, info.Version)
	}
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte(info.Version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "COMMIT"), []byte(info.Commit+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d renders of %s (commit %s) under %s", len(fps), info.Version, info.Commit, dir)
}

// TestUpgradeGuardDeclared: the guard fails on a restarting change that CHANGELOG.md's
// Unreleased section does not declare, naming the MiniCluster and pointing at CHANGELOG.md, and
// passes once it does. The change is a real render's: hello-world with another Flux view image
// (jammy for the default noble), as a release that changed the default view image would render it.
func TestUpgradeGuardDeclared(t *testing.T) {
	fnBin := fnBinary(t)
	src := filepath.Join(repoRoot(t), "examples", "hello-world", "minicluster.yaml")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	edited := filepath.Join(t.TempDir(), "minicluster.yaml")
	doc := strings.Replace(string(b), "\nspec:\n", "\nspec:\n  flux:\n    container:\n      image: ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy\n", 1)
	if doc == string(b) {
		t.Fatal("hello-world has no spec: line to edit")
	}
	if err := os.WriteFile(edited, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	const key = "examples/hello-world/minicluster.yaml"
	before := renderFingerprints(t, fnBin, []upgradeInput{{key, src}})
	after := renderFingerprints(t, fnBin, []upgradeInput{{key, edited}})
	if before[key] == nil || after[key] == nil {
		t.Fatal("hello-world did not render")
	}
	problems, err := upgradeProblems(before, after, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].slug != impact.Replaced.Slug() {
		t.Fatalf("problems %+v, want hello-world's broker Job replaced", problems)
	}

	head := "# Changelog\n\n## [Unreleased]\n"
	released := "\n## [0.1.0] - 2026-12-06\n\n### Upgrade impact\n- `replaced` every MiniCluster.\n"
	declared := "\n### Upgrade impact\n- `replaced` every MiniCluster: the default Flux view image is newer. Running MiniClusters restart; completed ones still in Git run their command again.\n"
	for _, c := range []struct {
		name, changelog, fails string
	}{
		{"undeclared", head + released, key + ": MiniCluster flux-sample: replaced"},
		{"declared", head + declared + released, ""},
		{"declared under another heading", head + "\n### Changed\n- `replaced` every MiniCluster.\n" + released, "CHANGELOG.md"},
		{"unknown impact", head + "\n### Upgrade impact\n- `restarted` every MiniCluster.\n", "unknown impact `restarted`"},
		{"no Unreleased section", "# Changelog\n" + released, `no "## [Unreleased]" section`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := upgradeGuard("v0.1.0", problems, c.changelog)
			switch {
			case c.fails == "" && err != nil:
				t.Errorf("the guard fails on a declared change: %v", err)
			case c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)):
				t.Errorf("the guard's error %v does not say %q", err, c.fails)
			}
		})
	}

	// A file that no longer renders is a problem too.
	gone, err := upgradeProblems(before, map[string][]byte{}, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || gone[0].slug != noLongerRenders {
		t.Errorf("problems %+v, want hello-world no longer renders", gone)
	}
}

// lastReleaseKptDir records what the last release's kpt fn render wrote into examples/kpt: the
// generated files as they are (the example is ours to commit), for TestUpgradeKptPackage.
const lastReleaseKptDir = "testdata/last-release-kpt"

// TestUpgradeKptPackage: a kpt package holds what the last release rendered into it, committed
// beside the MiniCluster; this code renders that package again (the user upgraded the function)
// and the package ends exactly as a first render by this code leaves it: the old files replaced,
// none refused or left behind.
func TestUpgradeKptPackage(t *testing.T) {
	fresh := newKptPackage(t)
	source := packageTree(t, fresh)
	kpt(t, fresh, 0, "fn", "render", "--allow-exec")
	want := packageTree(t, fresh)
	dir := filepath.Join(repoRoot(t), "tests", "e2e", lastReleaseKptDir)
	if *updateLastRelease {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range want {
			if _, ok := source[name]; !ok && !strings.HasSuffix(name, "/") {
				if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		return
	}
	recorded, err := os.ReadDir(dir)
	if err != nil || len(recorded) == 0 {
		t.Fatalf("no record of the last release's kpt output in %s (%v): go test ./tests/e2e -run '^TestUpgrade' -args -update-last-release", dir, err)
	}
	pkg := newKptPackage(t)
	for _, e := range recorded {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kpt(t, pkg, 0, "fn", "render", "--allow-exec")
	if d := treeDiff(want, packageTree(t, pkg)); len(d) > 0 {
		t.Errorf("rendering a package that holds the last release's output leaves it otherwise than a first render: %v", d)
	}
}
