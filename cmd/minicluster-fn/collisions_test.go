package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// writeMiniCluster writes a MiniCluster called name into dir/<name>.yaml, with spec appended.
func writeMiniCluster(t *testing.T, dir, name, spec string) string {
	t.Helper()
	file := filepath.Join(dir, name+".yaml")
	doc := "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: " + name + "\nspec:\n  size: 2\n" + spec
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

const webSidecar = `  containers:
  - {image: ubuntu:noble, runFlux: true}
  - {image: nginx, name: web, ports: [80]}
`

// TestTwoMiniClustersWithTheSameSidecar: each MiniCluster's port Service carries its name, so two
// MiniClusters with a `web` sidecar render objects that are all distinct (kustomize refuses two
// objects of the same kind, namespace and name: "already registered id").
func TestTwoMiniClustersWithTheSameSidecar(t *testing.T) {
	dir := t.TempDir()
	a, b := writeMiniCluster(t, dir, "team-a", webSidecar), writeMiniCluster(t, dir, "team-b", webSidecar)
	out, errOut, err := runCmd(t, "", "render", a, b)
	if err != nil {
		t.Fatalf("render: %v\n%s", err, errOut)
	}
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(out)}).Read()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		id := n.GetApiVersion() + " " + n.GetKind() + " " + n.GetNamespace() + "/" + n.GetName()
		if seen[id] {
			t.Errorf("rendered twice: %s", id)
		}
		seen[id] = true
	}
	for _, want := range []string{"v1 Service /team-a-web", "v1 Service /team-b-web"} {
		if !seen[want] {
			t.Errorf("no %s in the output", want)
		}
	}
}

// TestTwoMiniClustersWithTheSameHeadlessName: spec.network.headlessName names the headless
// Service, and two MiniClusters with the same one would render the same Service: render and
// validate refuse them, naming both MiniClusters, their files and the object, with nothing on stdout.
func TestTwoMiniClustersWithTheSameHeadlessName(t *testing.T) {
	dir := t.TempDir()
	spec := "  network: {headlessName: flux-service}\n  containers: [{image: ubuntu:noble, command: hostname}]\n"
	a, b := writeMiniCluster(t, dir, "team-a", spec), writeMiniCluster(t, dir, "team-b", spec)
	for _, cmd := range []string{"render", "validate"} {
		out, errOut, err := runCmd(t, "", cmd, a, b)
		if err == nil || out != "" {
			t.Errorf("%s: want a failure and no output, got err %v, stdout:\n%s", cmd, err, out)
		}
		// One line for each of the two, so that neither looks fine on its own.
		msg := "spec.network.headlessName: MiniCluster \"team-a\" (" + a + ") and MiniCluster \"team-b\" (" + b + ") would both generate Service/flux-service"
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "error: "+a+": MiniCluster/team-a: "+msg) ||
			!strings.HasPrefix(lines[1], "error: "+b+": MiniCluster/team-b: "+msg) {
			t.Errorf("%s: stderr\n%s\nwant a line for %s and one for %s, each starting with their file and\n%s", cmd, errOut, a, b, msg)
		}
	}
}
