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
	if res := runEnv(t, nil, work, env, "bash", script, out, src); res.code != 0 {
		t.Fatalf("render.sh: exit %d\n%s%s", res.code, res.stdout, res.stderr)
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
