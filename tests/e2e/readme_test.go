package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestMakeRunPrintsOnlyManifests: the README's first command, `make run`, prints the manifests
// and nothing else on stdout, so `make run > out.yaml` is a valid YAML stream of Kubernetes
// objects. The binary is built into a temporary BIN, so that the binaries other tests run in
// parallel are not rewritten under them; the example's generator runs the repository's bin/.
func TestMakeRunPrintsOnlyManifests(t *testing.T) {
	root := repoRoot(t)
	kustomize := kustomizeBinary(t)
	fnBinary(t) // the generator examples/hello-world runs: ../../bin/minicluster-fn
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("\nmake run ")) {
		t.Fatal("README.md no longer shows `make run`: test its first command instead")
	}

	cmd := exec.Command("make", "run", "BIN="+t.TempDir(), "KUSTOMIZE="+kustomize)
	cmd.Dir = root
	// As a user types it: not a sub-make of the `make test` that runs this test.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
	})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make run: %v\n%s", err, stderr.String())
	}

	reader := utilyaml.NewYAMLReader(bufio.NewReader(&stdout))
	kinds := map[string]int{}
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("make run's stdout is not a YAML stream: %v\n%s", err, stdout.String())
		}
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := sigsyaml.Unmarshal(doc, &obj); err != nil {
			t.Fatalf("make run's stdout holds a document that is no object: %v\n%s", err, doc)
		}
		if obj.APIVersion == "" || obj.Kind == "" || obj.Metadata.Name == "" {
			t.Errorf("make run's stdout holds a document that is no Kubernetes object:\n%s", doc)
		}
		kinds[obj.Kind]++
	}
	if kinds["Job"] != 2 || kinds["Service"] != 1 {
		t.Errorf("make run printed %v, want hello-world's objects (the keygen and broker Jobs, the headless Service)", kinds)
	}
}

// TestFirstTestRunIsCIs: a new user's `make test` is CI's run. The README's test command is the
// one .ci/run runs; it installs the Debian packages first (make deps), and every Debian package
// that a skip message or a build step asks for is on the list tools/deps.sh installs.
func TestFirstTestRunIsCIs(t *testing.T) {
	root := repoRoot(t)
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, ci, makefile, deps := read("README.md"), read(".ci/run"), read("Makefile"), read("tools/deps.sh")

	if !strings.Contains(readme, "\nmake test ") || !regexp.MustCompile(`(?m)^make test$`).MatchString(ci) {
		t.Error("the README's test command (make test) is not what .ci/run runs")
	}
	prerequisites := regexp.MustCompile(`(?m)^test: (.*)$`).FindStringSubmatch(makefile)
	if prerequisites == nil || strings.Fields(prerequisites[1])[0] != "deps" {
		t.Errorf("make test does not start with deps: %q", prerequisites)
	}
	if !regexp.MustCompile(`(?m)^deps:\n\tbash tools/deps.sh$`).MatchString(makefile) {
		t.Error("make deps does not run tools/deps.sh")
	}
	if strings.Contains(ci, "apt-get") {
		t.Error(".ci/run installs packages itself: a user's make test would not")
	}

	installed := map[string]bool{}
	for _, list := range regexp.MustCompile(`(?s)_packages="([^"]*)"`).FindAllStringSubmatch(deps, -1) {
		for _, p := range strings.Fields(list[1]) {
			installed[p] = true
		}
	}
	// What the project tells a user to install, in skip messages and build steps.
	asked := regexp.MustCompile(`apt-get install (?:-y )?([a-z0-9][a-z0-9 .+-]*)|\(Debian package ([a-z0-9.+-]+)\)`)
	found := 0
	repoFileLines(t, root, hasExt(".go", ".sh", "Makefile"), func(rel string, n int, text string) {
		for _, m := range asked.FindAllStringSubmatch(text, -1) {
			for _, pkg := range strings.Fields(m[1] + " " + m[2]) {
				found++
				if !installed[pkg] {
					t.Errorf("%s:%d asks for the Debian package %s, which make deps does not install", rel, n, pkg)
				}
			}
		}
	})
	if found == 0 {
		t.Fatal("no install hint found in the tree: the test looks in the wrong place")
	}
}
