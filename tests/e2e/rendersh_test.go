package e2e

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderScriptOutputBuilds: two MiniClusters with a sidecar of the same name, each with ports,
// rendered by examples/fluxcd/render.sh as Flux CD's CI step; the real kustomize builds the output
// directory, as kustomize-controller does. Each sidecar's Service carries its MiniCluster's name:
// two Service/web made kustomize fail with "already registered id", and with it the whole
// Kustomization.
func TestRenderScriptOutputBuilds(t *testing.T) {
	work := t.TempDir()
	src, out := filepath.Join(work, "hpc"), filepath.Join(work, "deploy")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"team-a", "team-b"} {
		doc := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: " + name + "\nspec:\n  size: 2\n" +
			"  containers:\n  - {image: ubuntu:noble, runFlux: true}\n  - {image: nginx, name: web, ports: [80]}\n"
		if err := os.WriteFile(filepath.Join(src, name+".yaml"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "MINICLUSTER_FN="+fnBinary(t))
	script := filepath.Join(repoRoot(t), "examples", "fluxcd", "render.sh")
	first := runEnv(t, nil, work, env, "bash", script, out, src)
	if first.code != 0 {
		t.Fatalf("render.sh: exit %d\n%s%s", first.code, first.stdout, first.stderr)
	}
	// It says which version rendered, on stderr and in the kustomization.yaml it commits.
	v := runEnv(t, nil, work, nil, fnBinary(t), "version")
	renderedBy, _, _ := strings.Cut(string(v.stdout), "\n")
	if !strings.HasPrefix(renderedBy, "minicluster-fn v") || !strings.Contains(string(first.stderr), "render.sh: rendering with "+renderedBy+" (") {
		t.Errorf("render.sh does not say it renders with %q:\n%s", renderedBy, first.stderr)
	}
	if k, err := os.ReadFile(filepath.Join(out, "kustomization.yaml")); err != nil || !strings.Contains(string(k), "\n# Rendered by "+renderedBy+"\n") {
		t.Errorf("%s/kustomization.yaml does not record %q (%v):\n%s", out, renderedBy, err, k)
	}
	res := kustomizeBuild(t, out)
	if res.code != 0 {
		t.Fatalf("kustomize build of render.sh's output: exit %d\n%s", res.code, res.stderr)
	}
	m, err := decodeManifests(res.stdout)
	if err != nil {
		t.Fatal(err)
	}
	var ports []string
	for _, s := range m.Services {
		if s.Labels[labelComponent] == "port-service" {
			ports = append(ports, s.Name)
		}
	}
	if strings.Join(ports, " ") != "team-a-web team-b-web" {
		t.Errorf("port Services %v, want team-a-web and team-b-web", ports)
	}

	// A third MiniCluster whose headless Service would be team-a's: render.sh stops before it
	// writes anything, and says which MiniClusters and which object.
	third := filepath.Join(src, "team-c.yaml")
	doc := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: team-c\nspec:\n  network: {headlessName: team-a}\n" +
		"  containers: [{image: ubuntu:noble, command: hostname}]\n"
	if err := os.WriteFile(third, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	before := dirContent(t, out)
	res = runEnv(t, nil, work, env, "bash", script, out, src)
	if res.code == 0 || !strings.Contains(string(res.stderr), `MiniCluster "team-a" (`+filepath.Join(src, "team-a.yaml")+`) and MiniCluster "team-c" (`+third+`) would both generate Service/team-a`) {
		t.Errorf("render.sh with two MiniClusters that generate Service/team-a: exit %d\n%s", res.code, res.stderr)
	}
	if after := dirContent(t, out); !maps.Equal(after, before) {
		t.Errorf("render.sh changed the output directory: %d files, %d before", len(after), len(before))
	}
}

// dirContent is the text of every file under dir, by its path inside dir.
func dirContent(t *testing.T, dir string) map[string]string {
	t.Helper()
	content := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		content[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return content
}

// TestRenderScriptImpact: render.sh prints what each run does to the running MiniClusters
// against what the output directory held (minicluster-fn diff --rendered), and with -F fails on
// the impacts named there, leaving the directory as it was.
func TestRenderScriptImpact(t *testing.T) {
	work := t.TempDir()
	src, out := filepath.Join(work, "hpc"), filepath.Join(work, "deploy")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(src, "steady.yaml")
	write := func(size, command string) {
		t.Helper()
		doc := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: steady\nspec:\n  size: " + size +
			"\n  maxSize: 4\n  containers:\n  - {image: ubuntu:noble, command: " + command + "}\n"
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "MINICLUSTER_FN="+fnBinary(t))
	script := filepath.Join(repoRoot(t), "examples", "fluxcd", "render.sh")
	renderSh := func(args ...string) result {
		t.Helper()
		return runEnv(t, nil, work, env, "bash", append([]string{script}, append(args, out, src)...)...)
	}
	write("2", "hostname")
	if res := renderSh(); res.code != 0 || !strings.Contains(string(res.stdout), "steady: added") {
		t.Fatalf("first render.sh: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	write("3", "hostname")
	if res := renderSh("-F", "replaced"); res.code != 0 || !strings.Contains(string(res.stdout), "steady: resized in place") {
		t.Errorf("render.sh after a resize within maxSize: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	before := dirContent(t, out)
	write("3", "uptime")
	res := renderSh("-F", "replaced,removed")
	if res.code == 0 || !strings.Contains(string(res.stdout), "steady: replaced: container steady: script wait-0.sh") ||
		!strings.Contains(string(res.stderr), "--fail-on names: replaced: steady") || !strings.Contains(string(res.stderr), "is left as it was") {
		t.Errorf("render.sh -F replaced after a command edit: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if after := dirContent(t, out); !maps.Equal(after, before) {
		t.Errorf("render.sh -F changed the output directory")
	}
}
