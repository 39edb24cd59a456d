package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// TestImageReferencesNameTheRelease: a user who follows the docs or an example pins a released
// image. Every mention of the project's image with a tag, in the docs, examples and goldens,
// names the last release of CHANGELOG.md (or the placeholder vX.Y.Z); the Makefile's defaults are
// the binary's, and a build from source says the version after that release, with -dev.
func TestImageReferencesNameTheRelease(t *testing.T) {
	root := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for variable, want := range map[string]string{"VERSION": version.Version, "IMAGE_REPOSITORY": version.ImageRepository} {
		m := regexp.MustCompile(`(?m)^` + variable + ` \?= (\S+)$`).FindSubmatch(makefile)
		if m == nil || string(m[1]) != want {
			t.Errorf("Makefile: %s ?= %q, want %q (the default in internal/version)", variable, m, want)
		}
	}
	changelog, err := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`).FindSubmatch(changelog)
	if m == nil {
		t.Fatal("CHANGELOG.md records no release (## [X.Y.Z] - YYYY-MM-DD)")
	}
	release := "v" + string(m[1])
	dev, err := utilversion.ParseSemantic(version.Version)
	// The version it will be released as comes after the last release.
	if err != nil || !strings.HasSuffix(version.Version, "-dev") || !dev.WithPreRelease("").GreaterThan(utilversion.MustParseSemantic(release)) {
		t.Errorf("a build from source says %s, want the version after the last release %s, with -dev", version.Version, release)
	}
	allowed := []string{version.ImageRepository + ":" + release, version.ImageRepository + ":vX.Y.Z"}
	reference := regexp.MustCompile(regexp.QuoteMeta(version.ImageRepository) + `:[\w.-]+`)
	found := 0
	repoFileLines(t, root, hasExt(".md", ".yaml", ".yml", "Kptfile"), func(rel string, n int, text string) {
		for _, ref := range reference.FindAllString(text, -1) {
			found++
			if !slices.Contains(allowed, ref) && rel != "CHANGELOG.md" {
				t.Errorf("%s:%d names the image %s; the last release is %s", rel, n, ref, allowed[0])
			}
		}
	})
	if found == 0 {
		t.Fatalf("no reference to %s found under %s: the test looks in the wrong place", version.ImageRepository, root)
	}
}

// TestNoPointersOutsideTheRepository: comments and docs state facts or link public sources. A
// pointer to the project's private notes ("reference/flux-operator.md §1.8", "issue 13") means
// nothing to a maintainer who clones the repository. (The vendored sources and the corpus under
// ../shared are test inputs, read by tests that skip clearly without them.)
func TestNoPointersOutsideTheRepository(t *testing.T) {
	root := repoRoot(t)
	pointer := regexp.MustCompile(`\breference/|\breference §|\b(?:tooling|flux-runtime|real-node|flux-operator|krm-gitops)\.md\b|\bDESIGN(?:\.md)? ?§|(?i:\bissue #?\d+|\bsession \d+\b)`)
	checked := repoFileLines(t, root, hasExt(".go", ".md", ".sh", ".yaml", ".yml", ".py", ".toml", "Makefile", "Kptfile", "run"),
		func(rel string, n int, text string) {
			if m := pointer.FindString(text); m != "" && rel != "tests/e2e/docs_test.go" {
				t.Errorf("%s:%d points outside the repository (%q): say the fact itself, or link a public source", rel, n, m)
			}
		})
	if checked < 50 {
		t.Fatalf("only %d files checked under %s: the test looks in the wrong place", checked, root)
	}
}

// TestDocsStateCurrentFacts: the docs say what holds now, with the figures and the commands that
// measured them, not a diary of runs: no dates, no commits, no "since fixed". The history is in git.
func TestDocsStateCurrentFacts(t *testing.T) {
	root := repoRoot(t)
	diary := regexp.MustCompile(`\b20\d\d-\d\d-\d\d\b|(?i:\bsince fixed\b|\b(?:on|of|at) main\b)|\bmain (?:at )?[0-9a-f]{7,40}\b`)
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append(docs, filepath.Join(root, "README.md"))
	if len(docs) < 5 {
		t.Fatalf("found only %d docs", len(docs))
	}
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		for i, line := range strings.Split(string(b), "\n") {
			if m := diary.FindString(line); m != "" {
				t.Errorf("%s:%d reads as a diary (%q): state the current fact and figure", rel, i+1, m)
			}
		}
	}
}

// repoFileLines calls line for every line of the repository's files whose name keep accepts (the
// work tree, without .git, bin/ and testdata/), with the path relative to root and the line number.
// It returns how many files it read, so that a test can tell that it looked in the right place.
func repoFileLines(t *testing.T, root string, keep func(name string) bool, line func(rel string, n int, text string)) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "bin" || name == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !keep(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, p)
		for i, text := range strings.Split(string(b), "\n") {
			line(rel, i+1, text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// hasExt is a keep function of repoFileLines: the file's extension or whole name is one of these.
func hasExt(names ...string) func(string) bool {
	return func(name string) bool {
		return slices.Contains(names, filepath.Ext(name)) || slices.Contains(names, name)
	}
}

// TestDocsNameTheCertificateAsRendered: the docs say what the certificate object is as the binary
// renders it, a Secret named after the headless Service, and never name it <name>-curve, a name
// no version of the render has used for it.
func TestDocsNameTheCertificateAsRendered(t *testing.T) {
	root := repoRoot(t)
	fn := fnBinary(t)
	res := run(t, nil, root, fn, "render", filepath.Join("examples", "hello-world", "minicluster.yaml"))
	if res.code != 0 {
		t.Fatalf("render: exit %d\n%s", res.code, res.stderr)
	}
	m, err := decodeManifests(res.stdout)
	if err != nil {
		t.Fatal(err)
	}
	brokers := jobsWith(m, componentBroker)
	headless := servicesWith(m, componentHeadless)
	if len(brokers) != 1 || len(headless) != 1 {
		t.Fatalf("hello-world renders %d broker Jobs and %d headless Services, want one each", len(brokers), len(headless))
	}
	if kind, name := curveSource(brokers[0]); kind != "Secret" || name != headless[0].Name {
		t.Fatalf("the broker pods mount the certificate from %s %q; the docs below say a Secret named after the headless Service %q", kind, name, headless[0].Name)
	}
	for _, doc := range []string{"README.md", "docs/generated-objects.md", "docs/differences-from-operator.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "named after the headless Service") {
			t.Errorf("%s does not say that the certificate is named after the headless Service", doc)
		}
	}
	repoFileLines(t, root, hasExt(".md"), func(rel string, n int, text string) {
		if strings.Contains(text, "-curve`") || strings.Contains(text, "<name>-curve") {
			t.Errorf("%s:%d names the certificate <name>-curve, which the render never makes: %s", rel, n, text)
		}
	})
}
