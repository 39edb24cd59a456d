package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
