package main

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// renderInto renders MiniCluster files into dir/<name>.yaml with the render command.
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
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
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
	renderInto(t, filepath.Join(work, "deploy"), examples)
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
		{name: "error-no-rendered-output", args: append([]string{"empty"}, git...), fails: true},
		{name: "error-generator-setup", args: append([]string{"generator-setup"}, git...), fails: true},
		{name: "error-missing-directory", args: append([]string{"missing"}, git...), fails: true},
		{name: "error-required-flags", args: []string{"deploy"}, fails: true, flagError: true},
		{name: "error-bad-flags", args: []string{"deploy", "--source-kind", "HelmRepository", "--url", "ftp://example.com/x",
			"--target-namespace", "HPC_Team", "--name", "Bad.Name-", "--interval", "0s", "--timeout", "500ms",
			"--broker-health-check", "always"}, fails: true, flagError: true},
		{name: "error-git-flags", args: []string{"deploy", "--url", "oci://ghcr.io/org/x", "--branch", "main", "--tag", "v1",
			"--target-namespace", "hpc"}, fails: true, flagError: true},
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

// TestFluxcdExample keeps examples/fluxcd current: its rendered directory must be what render
// prints now, and its Flux CD objects what fluxcd prints for it (-update rewrites them).
func TestFluxcdExample(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	deploy := filepath.Join("examples", "fluxcd", "deploy")
	for _, file := range exampleArgs.sources {
		out, errOut, err := runCmd(t, "", "validate", file)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		name := strings.TrimSpace(out[strings.LastIndex(out, "MiniCluster/")+len("MiniCluster/"):])
		rendered, errOut, err := runCmd(t, "", "render", file)
		if err != nil {
			t.Fatalf("%v\n%s", err, errOut)
		}
		golden(t, filepath.Join(deploy, name+".yaml"), rendered)
	}
	out, errOut, err := runCmd(t, "", append([]string{"fluxcd", deploy}, exampleArgs.fluxcd...)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	golden(t, filepath.Join("examples", "fluxcd", "flux-system", "miniclusters.yaml"), out)
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

// TestFluxcdRenderScript runs examples/fluxcd/render.sh as CI would: it must reproduce the
// committed example exactly, and a second run without one of the MiniClusters must leave no
// file of it behind (Flux CD then prunes its objects).
func TestFluxcdRenderScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: render.sh not run")
	}
	fnBin := fnBinaryForScripts(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	out, fluxFile := filepath.Join(work, "deploy"), filepath.Join(work, "flux", "miniclusters.yaml")
	runScript := func(sources ...string) {
		t.Helper()
		args := append([]string{filepath.Join("examples", "fluxcd", "render.sh"), "-f", fluxFile, out}, sources...)
		args = append(append(args, "--"), exampleArgs.fluxcd...)
		args = append(args, "--path", "./examples/fluxcd/deploy")
		cmd := exec.Command(bash, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "MINICLUSTER_FN="+fnBin)
		if combined, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("render.sh: %v\n%s", err, combined)
		}
	}
	runScript(exampleArgs.sources...)
	committed := filepath.Join(root, "examples", "fluxcd", "deploy")
	entries, err := os.ReadDir(committed)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadDir(out)
	if len(got) != len(entries) {
		t.Errorf("render.sh wrote %d files, examples/fluxcd/deploy has %d", len(got), len(entries))
	}
	for _, e := range entries {
		want, _ := os.ReadFile(filepath.Join(committed, e.Name()))
		have, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil || !bytes.Equal(have, want) {
			t.Errorf("render.sh output %s differs from examples/fluxcd/deploy (err %v); run go test ./cmd/minicluster-fn -update", e.Name(), err)
		}
	}
	want, _ := os.ReadFile(filepath.Join(root, "examples", "fluxcd", "flux-system", "miniclusters.yaml"))
	if have, err := os.ReadFile(fluxFile); err != nil || !bytes.Equal(have, want) {
		t.Errorf("render.sh -f output differs from examples/fluxcd/flux-system/miniclusters.yaml (err %v)", err)
	}

	runScript(exampleArgs.sources[0])
	if _, err := os.Stat(filepath.Join(out, "flux-interactive.yaml")); !os.IsNotExist(err) {
		t.Errorf("flux-interactive.yaml is still there after its MiniCluster was dropped (stat: %v)", err)
	}
	kustomization, _ := os.ReadFile(filepath.Join(out, "kustomization.yaml"))
	if strings.Contains(string(kustomization), "flux-interactive") || !strings.Contains(string(kustomization), "- flux-sample.yaml") {
		t.Errorf("kustomization.yaml after the second run:\n%s", kustomization)
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

// readDir is the content of every file in dir, by name.
func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = string(data)
	}
	return files
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
	before := readDir(t, out)
	for _, name := range []string{"plain", "double-quoted", "single-quoted", "commented", "flow"} {
		if !strings.Contains(before["kustomization.yaml"], "- "+name+".yaml\n") {
			t.Errorf("render.sh FILE... did not render %s:\n%s", name, before["kustomization.yaml"])
		}
	}

	// The same MiniClusters found under the directory: the same output, nothing pruned.
	if combined, err := runRenderScript(t, fnBin, out, src); err != nil {
		t.Fatalf("render.sh DIR: %v\n%s", err, combined)
	}
	after := readDir(t, out)
	for name, text := range before {
		if name != "kustomization.yaml" && after[name] != text {
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
			if got := readDir(t, out); !maps.Equal(got, after) {
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
