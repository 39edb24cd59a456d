package main

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// renderInto renders MiniCluster files into dir/<name>.yaml with the render command (a name may
// hold a subdirectory).
func renderInto(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, file := range files {
		out, errOut, err := runCmd(t, "", "render", file)
		if err != nil {
			t.Fatalf("render %s: %v\n%s", file, err, errOut)
		}
		writeTestFile(t, filepath.Join(dir, name+".yaml"), out)
	}
}

// TestFluxcdGolden runs the fluxcd command on a directory with the rendered examples (a batch, a
// command that ends, an interactive cluster, one with services and a sidecar) and on bad input,
// from a temporary working directory so that the paths in the messages are stable. Output goes
// to testdata/fluxcd/<case>.yaml, stderr to <case>.stderr.
func TestFluxcdGolden(t *testing.T) {
	examples := map[string]string{}
	for _, name := range []string{"batch", "hello-world", "interactive", "services"} {
		abs, err := filepath.Abs(filepath.Join("..", "..", "examples", name, "minicluster.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		examples[name] = abs
	}
	goldenDir, err := filepath.Abs(filepath.Join("testdata", "fluxcd"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	// deploy: all in one directory; split: a directory per MiniCluster, as render.sh writes them;
	// nested: a MiniCluster below the directory of another one.
	renderInto(t, filepath.Join(work, "deploy"), examples)
	split, nested := map[string]string{}, map[string]string{}
	for name, file := range examples {
		split[name+"/"+name] = file
	}
	nested["hello-world"], nested["more/batch"] = examples["hello-world"], examples["batch"]
	renderInto(t, filepath.Join(work, "split"), split)
	renderInto(t, filepath.Join(work, "nested"), nested)
	if err := os.MkdirAll(filepath.Join(work, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The common mistake: the kustomize generator setup committed for Flux CD.
	generatorSetup := filepath.Join(work, "generator-setup")
	if err := os.MkdirAll(generatorSetup, 0o755); err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile(examples["hello-world"])
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"minicluster.yaml":   string(source),
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators:\n- minicluster.yaml\n",
	} {
		if err := os.WriteFile(filepath.Join(generatorSetup, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)

	git := []string{"--url", "https://github.com/org/hpc", "--target-namespace", "hpc"}
	for _, tc := range []struct {
		name string
		args []string
		// flagError: every message must name a flag.
		fails, flagError bool
	}{
		{name: "git-defaults", args: append([]string{"deploy"}, git...)},
		{name: "git-tag-settings", args: []string{"deploy", "--url", "ssh://git@github.com/org/hpc", "--tag", "v1.2.0",
			"--target-namespace", "hpc", "--name", "hpc-miniclusters", "--namespace", "hpc-system", "--path", "clusters/prod/deploy",
			"--secret-ref", "git-ssh", "--interval", "1h", "--source-interval", "1m", "--retry-interval", "30s", "--timeout", "45m"}},
		{name: "oci", args: []string{"deploy", "--source-kind", "OCIRepository", "--url", "oci://ghcr.io/org/hpc-manifests", "--target-namespace", "hpc"}},
		{name: "broker-health-check-none", args: append([]string{"deploy", "--broker-health-check", "none"}, git...)},
		{name: "directories", args: append([]string{"split"}, git...)},
		{name: "oci-insecure", args: []string{"split", "--source-kind", "OCIRepository", "--url", "oci://127.0.0.1:5000/hpc", "--insecure", "--target-namespace", "hpc"}},
		{name: "error-nested-directories", args: append([]string{"nested"}, git...), fails: true},
		{name: "error-long-name", args: append([]string{"split", "--name", strings.Repeat("n", 250)}, git...), fails: true},
		{name: "error-no-rendered-output", args: append([]string{"empty"}, git...), fails: true},
		{name: "error-generator-setup", args: append([]string{"generator-setup"}, git...), fails: true},
		{name: "error-missing-directory", args: append([]string{"missing"}, git...), fails: true},
		{name: "error-required-flags", args: []string{"deploy"}, fails: true, flagError: true},
		{name: "error-bad-flags", args: []string{"deploy", "--source-kind", "HelmRepository", "--url", "ftp://example.com/x",
			"--target-namespace", "HPC_Team", "--name", "Bad.Name-", "--interval", "0s", "--timeout", "500ms",
			"--broker-health-check", "always"}, fails: true, flagError: true},
		{name: "error-git-flags", args: []string{"deploy", "--url", "oci://ghcr.io/org/x", "--branch", "main", "--tag", "v1",
			"--target-namespace", "hpc", "--insecure"}, fails: true, flagError: true},
		{name: "error-oci-flags", args: []string{"deploy", "--source-kind", "OCIRepository", "--url", "https://github.com/org/hpc",
			"--branch", "main", "--target-namespace", "hpc"}, fails: true, flagError: true},
		{name: "error-path-outside", args: append([]string{filepath.Join(work, "deploy")}, git...), fails: true, flagError: true},
		{name: "error-path-escapes", args: append([]string{"deploy", "--path", "../elsewhere"}, git...), fails: true, flagError: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runCmd(t, "", append([]string{"fluxcd"}, tc.args...)...)
			errOut = strings.ReplaceAll(errOut, work, "$WORK")
			golden(t, filepath.Join(goldenDir, tc.name+".stderr"), errOut)
			if !tc.fails {
				if err != nil {
					t.Fatalf("fluxcd failed: %v\n%s", err, errOut)
				}
				golden(t, filepath.Join(goldenDir, tc.name+".yaml"), out)
				return
			}
			if err == nil {
				t.Fatalf("fluxcd succeeded, want failure; stdout:\n%s", out)
			}
			if out != "" {
				t.Errorf("a failure must write nothing to stdout, got:\n%s", out)
			}
			for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
				if strings.HasPrefix(line, "Run '") {
					continue
				}
				if !strings.HasPrefix(line, "error: ") {
					t.Errorf("stderr line without severity: %q", line)
				}
				if tc.flagError && !strings.HasPrefix(line, "error: --") {
					t.Errorf("flag error must start with the flag's name: %q", line)
				}
			}
		})
	}
}

// exampleArgs are how examples/fluxcd was generated, from the repository root.
var exampleArgs = struct{ sources, fluxcd []string }{
	sources: []string{"examples/hello-world/minicluster.yaml", "examples/interactive/minicluster.yaml"},
	fluxcd:  []string{"--url", "https://github.com/minicluster-fn/minicluster-fn", "--branch", "main", "--target-namespace", "miniclusters"},
}

// renderedBy is the line of the kustomization.yaml render.sh writes that names the version of
// minicluster-fn that rendered; the example is rendered by whichever build is tested.
var renderedBy = regexp.MustCompile(`(?m)^# Rendered by minicluster-fn v\S+$`)

func withoutVersion(s string) string {
	return renderedBy.ReplaceAllString(s, "# Rendered by minicluster-fn (version)")
}

// TestFluxcdExample keeps examples/fluxcd current: render.sh, run from the repository root as the
// README says, must write exactly the committed deploy directory and Flux CD objects (-update
// rewrites them from its output).
func TestFluxcdExample(t *testing.T) {
	fnBin := fnBinaryForScripts(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	out, fluxFile := filepath.Join(work, "deploy"), filepath.Join(work, "miniclusters.yaml")
	args := append([]string{"-f", fluxFile, out}, exampleArgs.sources...)
	args = append(append(append(args, "--"), exampleArgs.fluxcd...), "--path", "./examples/fluxcd/deploy")
	if combined, err := runRenderScript(t, fnBin, args...); err != nil {
		t.Fatalf("render.sh: %v\n%s", err, combined)
	}
	committed := filepath.Join(root, "examples", "fluxcd", "deploy")
	got, want := readTree(t, out), readTree(t, committed)
	if *update {
		if err := os.RemoveAll(committed); err != nil {
			t.Fatal(err)
		}
		for name, data := range got {
			file := filepath.Join(committed, name)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		for _, name := range slices.Sorted(maps.Keys(got)) {
			if _, ok := want[name]; !ok {
				t.Errorf("render.sh wrote %s, which examples/fluxcd/deploy lacks (run go test ./cmd/minicluster-fn -update)", name)
			} else if withoutVersion(got[name]) != withoutVersion(want[name]) {
				t.Errorf("render.sh output %s differs from examples/fluxcd/deploy (run go test ./cmd/minicluster-fn -update after checking the change):\n--- got\n%s\n--- want\n%s", name, got[name], want[name])
			}
		}
		for name := range want {
			if _, ok := got[name]; !ok {
				t.Errorf("examples/fluxcd/deploy has %s, which render.sh no longer writes", name)
			}
		}
	}
	flux, err := os.ReadFile(fluxFile)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join(root, "examples", "fluxcd", "flux-system", "miniclusters.yaml"), string(flux))
}

// readTree is the content of every file under dir, by its slash-separated path inside dir.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// fnBinaryForScripts is the minicluster-fn binary for shell scripts: MINICLUSTER_FN (make unit
// sets it), or one built from this package.
func fnBinaryForScripts(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("MINICLUSTER_FN"); bin != "" {
		abs, err := filepath.Abs(bin)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	bin := filepath.Join(t.TempDir(), "minicluster-fn")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestFluxcdRenderScript: a second run of render.sh without one of the MiniClusters leaves no file
// of it behind (Flux CD then prunes its objects), and its Kustomization is gone from the Flux CD
// objects. What render.sh writes from the examples is TestFluxcdExample's.
func TestFluxcdRenderScript(t *testing.T) {
	fnBin := fnBinaryForScripts(t)
	work := t.TempDir()
	out, fluxFile := filepath.Join(work, "deploy"), filepath.Join(work, "flux", "miniclusters.yaml")
	// A file of the user's in the output directory, and a directory render.sh did not write.
	writeTestFile(t, filepath.Join(out, "README.md"), "mine")
	writeTestFile(t, filepath.Join(out, "mine", "kustomization.yaml"), "resources: []\n")
	runScript := func(sources ...string) {
		t.Helper()
		args := append([]string{"-f", fluxFile, out}, sources...)
		args = append(append(args, "--"), exampleArgs.fluxcd...)
		args = append(args, "--path", "./deploy")
		if combined, err := runRenderScript(t, fnBin, args...); err != nil {
			t.Fatalf("render.sh: %v\n%s", err, combined)
		}
	}
	runScript(exampleArgs.sources...)
	if _, err := os.Stat(filepath.Join(out, "flux-interactive", "flux-interactive.yaml")); err != nil {
		t.Fatalf("first run: %v", err)
	}
	runScript(exampleArgs.sources[0])
	if _, err := os.Stat(filepath.Join(out, "flux-interactive")); !os.IsNotExist(err) {
		t.Errorf("flux-interactive/ is still there after its MiniCluster was dropped (stat: %v)", err)
	}
	for _, kept := range []string{"README.md", "mine/kustomization.yaml", "flux-sample/flux-sample.yaml"} {
		if _, err := os.Stat(filepath.Join(out, kept)); err != nil {
			t.Errorf("%s: %v", kept, err)
		}
	}
	kustomization, _ := os.ReadFile(filepath.Join(out, "kustomization.yaml"))
	if strings.Contains(string(kustomization), "flux-interactive") || !strings.Contains(string(kustomization), "- flux-sample\n") {
		t.Errorf("kustomization.yaml after the second run:\n%s", kustomization)
	}
	flux, _ := os.ReadFile(fluxFile)
	if strings.Contains(string(flux), "flux-interactive") || !strings.Contains(string(flux), "name: miniclusters-flux-sample\n") {
		t.Errorf("the Flux CD objects after the second run:\n%s", flux)
	}
}

func writeTestFile(t *testing.T, file, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFluxcdRenderScriptShellcheck(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("shellcheck is not installed (apt-get install -y shellcheck): render.sh not checked")
	}
	if out, err := exec.Command(shellcheck, filepath.Join("..", "..", "examples", "fluxcd", "render.sh")).CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

// runRenderScript runs examples/fluxcd/render.sh from the repository's top directory with the
// minicluster-fn binary fnBin, returning its combined output.
func runRenderScript(t *testing.T, fnBin string, args ...string) (string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: render.sh not run")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, append([]string{filepath.Join("examples", "fluxcd", "render.sh")}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "MINICLUSTER_FN="+fnBin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestFluxcdRenderScriptParsesYAML: render.sh finds the MiniClusters under a directory by parsing
// the files, as minicluster-fn does, so a kind line written in any YAML form is rendered; a file it
// cannot render (a MiniCluster beside another object, YAML that does not parse) stops it, naming
// the file, with the output directory as it was. Before, a grep for "kind: MiniCluster" skipped
// such files, and the output rendered from them earlier disappeared: Flux CD prunes the cluster.
func TestFluxcdRenderScriptParsesYAML(t *testing.T) {
	fnBin := fnBinaryForScripts(t)
	work := t.TempDir()
	src, out := filepath.Join(work, "hpc"), filepath.Join(work, "deploy")
	mc := func(name, kindLine string) string {
		return "apiVersion: flux-framework.org/v1alpha2\n" + kindLine + "\nmetadata:\n  name: " + name +
			"\nspec:\n  containers: [{image: ubuntu:noble, command: hostname}]\n"
	}
	files := map[string]string{
		"plain.yaml":          mc("plain", "kind: MiniCluster"),
		"quoted.yaml":         mc("double-quoted", `kind: "MiniCluster"`),
		"team/single.yml":     mc("single-quoted", `kind: 'MiniCluster'`),
		"commented.yaml":      mc("commented", "kind: MiniCluster # the HPC cluster"),
		"flow.yaml":           `{apiVersion: flux-framework.org/v1alpha2, kind: MiniCluster, metadata: {name: flow}, spec: {containers: [{image: ubuntu:noble}]}}` + "\n",
		"kustomization.yaml":  "resources: [plain.yaml]\n",
		"team/namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: hpc\n",
		"playbook.yml":        "- hosts: all\n",
	}
	var miniClusterFiles []string
	for name, text := range files {
		file := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(text, "MiniCluster") {
			miniClusterFiles = append(miniClusterFiles, file)
		}
	}
	// The output of an earlier run, from the files named one by one.
	if combined, err := runRenderScript(t, fnBin, append([]string{out}, miniClusterFiles...)...); err != nil {
		t.Fatalf("render.sh FILE...: %v\n%s", err, combined)
	}
	before := readTree(t, out)
	for _, name := range []string{"plain", "double-quoted", "single-quoted", "commented", "flow"} {
		if !strings.Contains(before["kustomization.yaml"], "- "+name+"\n") || before[name+"/"+name+".yaml"] == "" {
			t.Errorf("render.sh FILE... did not render %s:\n%s", name, before["kustomization.yaml"])
		}
	}

	// The same MiniClusters found under the directory: the same output, nothing pruned.
	if combined, err := runRenderScript(t, fnBin, out, src); err != nil {
		t.Fatalf("render.sh DIR: %v\n%s", err, combined)
	}
	after := readTree(t, out)
	for name, text := range before {
		if name != "kustomization.yaml" && !strings.HasSuffix(name, "/kustomization.yaml") && after[name] != text {
			t.Errorf("render.sh DIR: %s differs from the earlier render or is gone", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("render.sh DIR wrote %d files, the earlier render %d", len(after), len(before))
	}

	for name, tc := range map[string]struct{ file, text, want string }{
		"MiniCluster beside another object": {"mixed.yaml", mc("mixed", `kind: "MiniCluster"`) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
			"ConfigMap/settings is in a file that holds a MiniCluster"},
		"YAML that does not parse": {"broken.yaml", mc("broken", `kind: "MiniCluster"`) + "  size: [\n", "YAML does not parse"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := filepath.Join(src, tc.file)
			if err := os.WriteFile(bad, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(bad)
			combined, err := runRenderScript(t, fnBin, out, src)
			if err == nil {
				t.Errorf("render.sh succeeded:\n%s", combined)
			}
			if !strings.Contains(combined, "error: "+bad) || !strings.Contains(combined, tc.want) {
				t.Errorf("the message must name %s and say %q:\n%s", bad, tc.want, combined)
			}
			if got := readTree(t, out); !maps.Equal(got, after) {
				t.Errorf("the output directory changed: %d files, %d before", len(got), len(after))
			}
		})
	}
}

// TestFluxcdRenderScriptWithoutBinary: without minicluster-fn on PATH or in MINICLUSTER_FN,
// render.sh says what is missing and how to provide it, exits 2 and writes nothing (it used to
// die with bash's exit 127).
func TestFluxcdRenderScriptWithoutBinary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "deploy")
	for name, fnBin := range map[string]string{
		"MINICLUSTER_FN names no file": filepath.Join(t.TempDir(), "minicluster-fn"),
		"not on PATH":                  "",
	} {
		t.Run(name, func(t *testing.T) {
			if onPath, err := exec.LookPath("minicluster-fn"); fnBin == "" && err == nil {
				t.Skipf("minicluster-fn is on this machine's PATH (%s)", onPath)
			}
			combined, err := runRenderScript(t, fnBin, out, filepath.Join("examples", "hello-world"))
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 2 {
				t.Fatalf("render.sh: %v, want exit 2\n%s", err, combined)
			}
			if !strings.Contains(combined, "is not found: put minicluster-fn on PATH") || !strings.Contains(combined, "MINICLUSTER_FN=") {
				t.Errorf("render.sh does not say how to provide the binary:\n%s", combined)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("render.sh created %s without a binary (%v)", out, err)
			}
		})
	}
}
