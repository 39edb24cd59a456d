package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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
	steps := regexp.MustCompile(`(?m)^TEST_STEPS := (.*)$`).FindStringSubmatch(makefile)
	if steps == nil || strings.Fields(steps[1])[0] != "deps" ||
		!regexp.MustCompile(`(?m)^test:\n\t.*tests/phases/run.sh 'make test' \$\(addprefix --beside ,\$\(TEST_BESIDE\)\) \$\(TEST_STEPS\)$`).MatchString(makefile) {
		t.Errorf("make test does not run TEST_STEPS, starting with deps: %q", steps)
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

// readmeFirstScreensEnd is the heading that ends the README's first screens: what it says before
// is run by TestReadmeFirstCommands. The Flux CD section and the ones after it show commands that
// run in the user's GitOps repository or on the user's files.
const readmeFirstScreensEnd = "\n## With Flux CD\n"

// readmeNotRunHere are the commands of the README's first screens that TestReadmeFirstCommands
// does not run, and why. A command of the README that is neither run nor listed here fails the
// test, and so does an entry that is no longer in the README.
var readmeNotRunHere = map[string]string{
	"curl -fsSLO https://github.com/minicluster-fn/minicluster-fn/releases/download/v0.1.0/minicluster-fn_0.1.0_linux_amd64.tar.gz": "downloads a published release; make release-test checks the archives make release writes",
	"curl -fsSLO https://github.com/minicluster-fn/minicluster-fn/releases/download/v0.1.0/checksums.txt":                           "downloads a published release; make release-test checks checksums.txt",
	"sha256sum --check --ignore-missing checksums.txt":                                                                              "needs the downloaded release; tools/release's TestChecksums runs sha256sum --check on the checksums.txt make release writes",
	"tar -xzf minicluster-fn_0.1.0_linux_amd64.tar.gz && install minicluster-fn_0.1.0_linux_amd64/minicluster-fn ~/.local/bin/":     "needs the downloaded release and writes into the user's home; tools/release's TestArchives and TestBinaryVersion read the archives and run the binary",
	"make image": "needs podman and runc; make container-test runs it",
	"make build image IMAGE_REPOSITORY=registry.example.com/hpc/minicluster-fn VERSION=v0.1.0":           "needs podman; make container-test builds the image with make image",
	"podman push registry.example.com/hpc/minicluster-fn:v0.1.0":                                         "pushes to the user's own registry (registry.example.com stands for it)",
	"bin/kustomize build --enable-alpha-plugins --enable-exec examples/hello-world | kubectl apply -f -": "needs a cluster; tests/live applies hello-world and reads its status",
	"bin/minicluster-fn check -n hpc examples/hello-world/minicluster.yaml":                              "needs a cluster; tests/integration's TestAPIServer/check runs check against a real API server, tests/live's TestCheckLive on the live cluster",
	"bin/minicluster-fn check -n hpc --smoke":                                                            "needs a cluster; tests/live's TestCheckSmokeLive runs it with the stand-in images",
	"bin/minicluster-fn status":                                        "needs a cluster; tests/live's TestStatusLive runs it, tests/integration with the view role",
	"bin/minicluster-fn wait flux-sample --for=complete --timeout=10m": "needs a cluster; tests/live's TestStatusLive runs wait",
	"bin/minicluster-fn install --kubectl-plugin ~/.local/bin":         "writes into the user's home; cmd/minicluster-fn's TestInstallKubectlPlugin runs it on a temporary directory",
}

// readmeCommands are the command lines of the ```sh blocks of text, each block a list of lines (a
// line ending in a backslash joined with the next, as the shell reads it).
func readmeCommands(text string) [][]string {
	var blocks [][]string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text, -1) {
		var lines []string
		for _, l := range strings.Split(strings.ReplaceAll(m[1], "\\\n", " "), "\n") {
			if strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
		blocks = append(blocks, lines)
	}
	return blocks
}

// TestReadmeFirstCommands: every command on the README's first screens runs as written, from the
// top directory of a fresh clone, after the two set-up commands of its first block (make run and
// make test, which build bin/minicluster-fn, bin/kustomize and bin/kpt; TestMakeRunPrintsOnlyManifests
// runs make run, and make test is CI's run). The clone is a Git repository of the work tree's files
// with the binaries the set-up commands leave in bin/ (kustomize and kpt, not rebuilt); after the
// commands, Git shows nothing new or changed: what they write, such as the kpt example's rendered
// files, is ignored.
func TestReadmeFirstCommands(t *testing.T) {
	root := repoRoot(t)
	kustomize, kpt := kustomizeBinary(t), kptBinary(t)
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, ok := strings.Cut(string(readme), readmeFirstScreensEnd)
	if !ok {
		t.Fatalf("README.md has no %q: say where its first screens end", strings.TrimSpace(readmeFirstScreensEnd))
	}
	blocks := readmeCommands(first)
	if len(blocks) < 3 {
		t.Fatalf("the README's first screens have %d sh blocks, want the set-up commands and at least two more", len(blocks))
	}
	for _, setup := range []string{"make run", "make test"} {
		if !slices.ContainsFunc(blocks[0], func(l string) bool { return strings.HasPrefix(l, setup+" ") || l == setup }) {
			t.Fatalf("the README's first block %q does not hold the set-up command %s", blocks[0], setup)
		}
	}
	if m := regexp.MustCompile(`pinned kustomize \((v[0-9.]+)\)`).FindStringSubmatch(first); m == nil {
		t.Error("the README does not say which kustomize make bin/kustomize builds")
	} else if makefile, err := os.ReadFile(filepath.Join(root, "Makefile")); err != nil || !strings.Contains(string(makefile), "\nKUSTOMIZE_VERSION := "+m[1]+"\n") {
		t.Errorf("the README says make bin/kustomize builds kustomize %s; the Makefile's KUSTOMIZE_VERSION differs (%v)", m[1], err)
	}

	clone := readmeClone(t, root, kustomize, kpt)
	// As a user types them: not a sub-make of the `make test` that runs this test.
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=")
	})
	ran := 0
	for _, block := range blocks[1:] {
		for _, line := range block {
			command := strings.TrimSpace(regexp.MustCompile(`\s+#.*$`).ReplaceAllString(line, ""))
			if why, skip := readmeNotRunHere[command]; skip {
				t.Logf("not run here: %s (%s)", command, why)
				continue
			}
			// Each line from the top directory, as the README's lines are written.
			res := runEnv(t, nil, clone, env, "bash", "-c", line)
			if res.code != 0 {
				t.Errorf("README command %q: exit %d\nstdout:\n%s\nstderr:\n%s", line, res.code, res.stdout, res.stderr)
				continue
			}
			ran++
			if strings.Contains(command, "kustomize build") {
				m, err := decodeManifests(res.stdout)
				if err != nil || len(jobsWith(m, componentBroker)) != 1 {
					t.Errorf("%q printed no broker Job (%v):\n%s", command, err, res.stdout)
				}
			}
		}
	}
	for command := range readmeNotRunHere {
		if !strings.Contains(first, command) {
			t.Errorf("readmeNotRunHere lists %q, which the README's first screens no longer show", command)
		}
	}
	if ran < 5 {
		t.Errorf("ran only %d of the README's commands (make build, bin/minicluster-fn version, bin/kustomize build, kpt fn render, ...)", ran)
	}
	status := run(t, nil, clone, "git", "status", "--porcelain", "--untracked-files=all")
	if status.code != 0 || len(status.stdout) > 0 {
		t.Errorf("after the README's commands, git status shows files that are neither tracked nor ignored, or changed (exit %d):\n%s%s",
			status.code, status.stdout, status.stderr)
	}
}

// readmeClone makes a fresh clone of the work tree in a temporary directory: a Git repository of
// the files Git would commit (tracked, and untracked but not ignored), with bin/kustomize and
// bin/kpt as make test leaves them (links to the binaries under test; the sources bin/kpt is
// built from are dated before it, so make does not rebuild it).
func readmeClone(t *testing.T, root, kustomize, kpt string) string {
	t.Helper()
	clone := filepath.Join(t.TempDir(), "minicluster-fn")
	list := run(t, nil, root, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if list.code != 0 {
		t.Fatalf("git ls-files: exit %d\n%s", list.code, list.stderr)
	}
	copied := 0
	for _, rel := range strings.Split(strings.TrimRight(string(list.stdout), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in Git
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(clone, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err == nil {
				err = os.Symlink(target, dst)
			}
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		copied++
	}
	if copied < 100 {
		t.Fatalf("copied %d files of the work tree: git ls-files looks in the wrong place", copied)
	}
	for _, git := range [][]string{
		{"init", "-q"}, {"add", "-A"},
		{"-c", "user.name=readme test", "-c", "user.email=readme@test.invalid", "commit", "-q", "--no-gpg-sign", "-m", "clone"},
	} {
		if res := run(t, nil, clone, "git", git...); res.code != 0 {
			t.Fatalf("git %s: exit %d\n%s", strings.Join(git, " "), res.code, res.stderr)
		}
	}
	if err := os.Mkdir(filepath.Join(clone, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(0, 0)
	for _, src := range []string{"tools/kpt/go.mod", "tools/kpt/go.sum"} {
		if err := os.Chtimes(filepath.Join(clone, src), old, old); err != nil {
			t.Fatal(err)
		}
	}
	for name, bin := range map[string]string{"kustomize": kustomize, "kpt": kpt} {
		if err := os.Symlink(bin, filepath.Join(clone, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	return clone
}
