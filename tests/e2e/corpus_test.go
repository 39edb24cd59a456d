package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// minCorpusSuccesses is how many corpus files must render. Measured: 32 of 33; the one that fails
// (elasticity/horizontal-autoscaler/v2-custom-metric) uses existingVolumes of the operator's v1alpha1 API.
const minCorpusSuccesses = 30

// corpusFiles returns the MiniCluster files of the flux-operator examples corpus (MINICLUSTER_FN_CORPUS
// or ../shared/corpus/flux-operator-examples next to the repository), sorted.
func corpusFiles(t *testing.T) (string, []string) {
	t.Helper()
	dir := os.Getenv("MINICLUSTER_FN_CORPUS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "..", "shared", "corpus", "flux-operator-examples")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skip("../shared/corpus not found: corpus tests skipped")
	}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if len(files) == 0 {
		t.Fatalf("no *.yaml files under %s", dir)
	}
	return dir, files
}

func TestCorpus(t *testing.T) {
	fnBin := fnBinary(t)
	dir, files := corpusFiles(t)

	// Render every file once; the subtests assert on the outcomes, so each can run alone (-run).
	type outcome struct {
		rel string
		res result
	}
	outcomes := make([]outcome, len(files))
	var rendered, failed []string
	for i, f := range files {
		rel, _ := filepath.Rel(dir, f)
		outcomes[i] = outcome{rel: rel, res: run(t, nil, "", fnBin, "render", f)}
		if outcomes[i].res.code == 0 {
			rendered = append(rendered, f)
		} else {
			failed = append(failed, rel)
		}
	}

	t.Run("render", func(t *testing.T) {
		for i, f := range files {
			rel, res := outcomes[i].rel, outcomes[i].res
			t.Run(rel, func(t *testing.T) {
				if res.code == 0 {
					t.Logf("rendered: %s", rel)
					if len(res.stderr) > 0 {
						t.Logf("stderr:\n%s", res.stderr)
					}
					if len(bytes.TrimSpace(res.stdout)) == 0 {
						t.Fatalf("exit 0 with an empty manifest stream")
					}
					checkStderrLines(t, res.stderr, f, "warning: ", "info: ")
					m, err := decodeManifests(res.stdout)
					if err != nil {
						t.Fatalf("decoding the output: %v", err)
					}
					src, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					job, _ := checkManifestSet(t, m, readMiniCluster(t, src))
					if job != nil {
						if cm := entrypointConfigMap(t, m, job); cm != nil {
							checkScripts(t, cm)
						}
					}
					return
				}
				t.Logf("rejected (exit %d): %s\n%s", res.code, rel, res.stderr)
				if len(res.stdout) != 0 {
					t.Errorf("exit %d but %d bytes on stdout: nothing must be half-written", res.code, len(res.stdout))
				}
				if !bytes.Contains(res.stderr, []byte("error: ")) {
					t.Errorf("exit %d without an error line on stderr", res.code)
				}
				checkStderrLines(t, res.stderr, f, "error: ", "warning: ", "info: ")
			})
		}
	})
	t.Logf("corpus: %d of %d files render; rejected: %q", len(rendered), len(files), failed)
	if len(rendered) < minCorpusSuccesses {
		t.Errorf("only %d of %d corpus files render, want at least %d", len(rendered), len(files), minCorpusSuccesses)
	}

	t.Run("deterministic", func(t *testing.T) {
		for _, f := range rendered {
			rel, _ := filepath.Rel(dir, f)
			a := run(t, nil, "", fnBin, "render", f)
			b := run(t, nil, "", fnBin, "render", f)
			if a.code != 0 || b.code != 0 {
				t.Errorf("%s: exit codes %d and %d", rel, a.code, b.code)
				continue
			}
			if !bytes.Equal(a.stdout, b.stdout) {
				t.Errorf("%s: two renders differ\n%s", rel, firstDiff(a.stdout, b.stdout))
			}
		}
	})

	t.Run("one-resourcelist", func(t *testing.T) {
		if len(rendered) == 0 {
			t.Fatal("no corpus file rendered")
		}
		var items []map[string]any
		for i, f := range rendered {
			rel, _ := filepath.Rel(dir, f)
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := sigsyaml.Unmarshal(b, &obj); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			md, _ := obj["metadata"].(map[string]any)
			if md == nil {
				t.Fatalf("%s: no metadata", rel)
			}
			// Many corpus files are all called flux-sample; names must be unique in one list.
			md["name"] = fmt.Sprintf("mc-%02d", i)
			ann, _ := md["annotations"].(map[string]any)
			if ann == nil {
				ann = map[string]any{}
			}
			ann["config.kubernetes.io/local-config"] = "true"
			ann["internal.config.kubernetes.io/path"] = filepath.ToSlash(rel)
			md["annotations"] = ann
			items = append(items, obj)
		}
		in := resourceList(t, items)
		base := run(t, in, "", fnBin)
		if base.code != 0 {
			t.Fatalf("KRM mode on %d MiniClusters exited %d\nstderr:\n%s", len(items), base.code, base.stderr)
		}
		out := parseResourceList(t, base.stdout)
		m := decodeItems(t, out)
		if got := len(jobsWith(m, componentBroker)); got != len(items) {
			t.Errorf("%d broker Jobs for %d MiniClusters", got, len(items))
		}
		t.Logf("%d MiniClusters in one ResourceList: %d items out, %d bytes", len(items), len(out.items), len(base.stdout))

		rng := rand.New(rand.NewPCG(1, 2))
		for p := range 5 {
			shuffled := slices.Clone(items)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			res := run(t, resourceList(t, shuffled), "", fnBin)
			if res.code != 0 {
				t.Errorf("permutation %d: exit %d\n%s", p, res.code, res.stderr)
				continue
			}
			if !bytes.Equal(res.stdout, base.stdout) {
				t.Errorf("permutation %d of the items gives a different output: the output must not depend on the order "+
					"the orchestrator read the files in (generated objects and pass-through items in a stable order)\n%s",
					p, firstDiff(base.stdout, res.stdout))
			}
		}
	})
}

// checkStderrLines asserts that every stderr line starts with one of prefixes and names the file
// and a field path (a segment with a dot or a bracket after the object).
func checkStderrLines(t *testing.T, stderr []byte, file string, prefixes ...string) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimRight(string(stderr), "\n"), "\n") {
		if line == "" {
			continue
		}
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(line, p) }) {
			t.Errorf("stderr line does not start with %q: %q", prefixes, line)
			continue
		}
		if !strings.Contains(line, file) {
			t.Errorf("stderr line does not name the file %s: %q", file, line)
		}
		if !hasFieldPath(line) {
			t.Errorf("stderr line names no field path (spec.…, metadata.…): %q", line)
		}
	}
}

func hasFieldPath(line string) bool {
	for _, part := range strings.Split(line, ": ") {
		if strings.HasPrefix(part, "spec.") || strings.HasPrefix(part, "metadata.") || part == "spec" || part == "metadata" {
			return true
		}
	}
	return false
}

// firstDiff shows the first differing line of two outputs.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("first difference at line %d:\n- %s\n+ %s", i+1, x, y)
		}
	}
	return "no line differs"
}
