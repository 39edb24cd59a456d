package fluxcd

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/fn"
)

// renderFile renders the MiniClusters of file in-process, as `minicluster-fn render file` does.
func renderFile(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: file}}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := (fn.Processor{Standalone: true}).WriteManifests(&framework.ResourceList{Items: nodes}, &out); err != nil {
		t.Fatalf("render %s: %v", file, err)
	}
	return out.Bytes()
}

// writeFile writes data to dir/name, creating dir.
func writeFile(t *testing.T, dir, name string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// exampleFiles are the MiniClusters of the kustomize examples, by directory name. (Other
// examples reuse their names.)
func exampleFiles(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, name := range []string{"batch", "hello-world", "interactive", "services", "volumes"} {
		m[name] = filepath.Join("..", "examples", name, "minicluster.yaml")
	}
	return m
}

// expectedPersistent decides from the MiniCluster spec whether its broker Job runs forever:
// interactive, no command on the runFlux container, or a sidecar container. ReadRendered
// decides the same from the rendered objects; this checks that both agree.
func expectedPersistent(t *testing.T, file string) bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mc, errs := v1alpha2.Decode(data)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", file, errs.ToAggregate())
	}
	mc.Default()
	if mc.Spec.Interactive {
		return true
	}
	for _, c := range mc.Spec.Containers {
		if !c.RunFlux || (c.Command == "" && c.Commands.Script == "") {
			return true
		}
	}
	return false
}

func TestReadRenderedExamples(t *testing.T) {
	dir := t.TempDir()
	examples := exampleFiles(t)
	for name, file := range examples {
		writeFile(t, dir, name+".yaml", renderFile(t, file))
	}
	clusters, err := ReadRendered(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(clusters) != len(examples) {
		t.Fatalf("found %d MiniClusters, want %d", len(clusters), len(examples))
	}
	if !slices.IsSortedFunc(clusters, func(a, b MiniCluster) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("MiniClusters are not sorted by name")
	}
	byName := map[string]MiniCluster{}
	for _, mc := range clusters {
		byName[mc.Name] = mc
		if mc.BrokerJob == "" || mc.Service == "" || mc.Curve == "" {
			t.Errorf("%s: broker Job %q, Service %q, certificate %q: all must be found", mc.Name, mc.BrokerJob, mc.Service, mc.Curve)
		}
		if mc.KeygenJob == "" || mc.CurveKind != "Secret" || mc.Curve != mc.Service {
			t.Errorf("%s: keygen Job %q, certificate %s/%s: the examples use the keygen Job and the Secret it creates", mc.Name, mc.KeygenJob, mc.CurveKind, mc.Curve)
		}
	}
	for name, file := range examples {
		mc, ok := byName["flux-"+name]
		if name == "hello-world" {
			mc, ok = byName["flux-sample"]
		}
		if !ok {
			t.Errorf("example %s not found among %v", name, clusters)
			continue
		}
		if want := expectedPersistent(t, file); (mc.Persistent != "") != want {
			t.Errorf("example %s: persistent %q, but the spec says persistent=%v", name, mc.Persistent, want)
		}
	}
	if services := byName["flux-services"]; services.ServicesPod == "" {
		t.Error("flux-services: the services Pod was not found")
	}
	if !strings.Contains(byName["flux-interactive"].Persistent, "spec.interactive") {
		t.Errorf("flux-interactive: reason %q should name spec.interactive", byName["flux-interactive"].Persistent)
	}
}

// TestPersistentDecisionCorpus compares the decision from the rendered objects with the decision
// from the spec for every MiniCluster of the operator's examples that renders.
func TestPersistentDecisionCorpus(t *testing.T) {
	corpus := filepath.Join("..", "..", "shared", "corpus", "flux-operator-examples")
	if fi, err := os.Stat(corpus); err != nil || !fi.IsDir() {
		t.Skip("../shared/corpus/flux-operator-examples not found next to the repository: corpus test skipped")
	}
	var files []string
	_ = filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return nil
	})
	var checked, persistent int
	for _, file := range files {
		data, _ := os.ReadFile(file)
		if _, errs := v1alpha2.Decode(data); len(errs) > 0 {
			continue // stale fields; the e2e corpus test covers what renders
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: file}}).Read()
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := (fn.Processor{Standalone: true}).WriteManifests(&framework.ResourceList{Items: nodes}, &out); err != nil {
			continue // invalid for this project; the e2e corpus test covers it
		}
		dir := t.TempDir()
		writeFile(t, dir, "rendered.yaml", out.Bytes())
		clusters, err := ReadRendered(dir)
		if err != nil || len(clusters) != 1 {
			t.Errorf("%s: %v (%d MiniClusters)", file, err, len(clusters))
			continue
		}
		want := expectedPersistent(t, file)
		if got := clusters[0].Persistent != ""; got != want {
			t.Errorf("%s: from the rendered objects persistent=%v (%q), from the spec %v", file, got, clusters[0].Persistent, want)
		}
		checked++
		if want {
			persistent++
		}
	}
	t.Logf("%d corpus MiniClusters checked, %d of them persistent", checked, persistent)
	if checked < 25 || persistent == 0 || persistent == checked {
		t.Errorf("checked %d MiniClusters (%d persistent): expected at least 25 of both kinds", checked, persistent)
	}
}

func TestReadRenderedBadInput(t *testing.T) {
	examples := exampleFiles(t)
	hello := renderFile(t, examples["hello-world"])
	source, err := os.ReadFile(examples["hello-world"])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  []string
	}{
		{"empty directory", nil, []string{"holds no rendered MiniCluster", "managed-by: minicluster-fn"}},
		{"only foreign objects", map[string][]byte{"cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")},
			[]string{"holds no rendered MiniCluster"}},
		{"MiniCluster with a generators kustomization", map[string][]byte{
			"minicluster.yaml":   source,
			"kustomization.yaml": []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators:\n- minicluster.yaml\n"),
		}, []string{"kustomization.yaml: generators: minicluster.yaml configures a KRM function", "external plugins disabled",
			"MiniCluster flux-sample has no rendered manifests"}},
		{"rendered, but still a generators kustomization", map[string][]byte{
			"minicluster.yaml":   source,
			"rendered.yaml":      hello,
			"kustomization.yaml": []byte("generators:\n- minicluster.yaml\nresources:\n- rendered.yaml\n"),
		}, []string{"generators: minicluster.yaml configures a KRM function"}},
		{"rendered twice", map[string][]byte{"a.yaml": hello, "b.yaml": hello}, []string{"b.yaml: 7 objects of MiniCluster flux-sample (ServiceAccount/flux-sample-keygen, ...) are also in", "a.yaml"}},
		{"does not parse", map[string][]byte{"a.yaml": hello, "broken.yaml": []byte("kind: [\n")}, []string{"broken.yaml: YAML does not parse"}},
		{"no broker Job", map[string][]byte{"a.yaml": bytes.Split(hello, []byte("\n---\n"))[0]}, []string{"no broker Job"}},
		// Output of a minicluster-fn that did not yet say whether the broker Job completes.
		{"broker Job without its lifetime", map[string][]byte{"a.yaml": bytes.Replace(hello, []byte("minicluster-fn.dev/lifetime: completes"), []byte("x: y"), 1)},
			[]string{"has no valid minicluster-fn.dev/lifetime label", "render MiniCluster flux-sample again"}},
		{"split across directories", map[string][]byte{
			"a.yaml":     hello[bytes.Index(hello, []byte("\n---\n"))+5:],
			"sub/b.yaml": hello[:bytes.Index(hello, []byte("\n---\n"))],
		}, []string{"sub/b.yaml: ", "is not in the directory of its broker Job"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tc.files {
				writeFile(t, dir, name, data)
			}
			_, err := ReadRendered(dir)
			if err == nil {
				t.Fatal("ReadRendered succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain %q:\n%v", w, err)
				}
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error does not name the directory or its file:\n%v", err)
			}
		})
	}
	t.Run("not a directory", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, dir, "a.yaml", hello)
		if _, err := ReadRendered(filepath.Join(dir, "a.yaml")); err == nil || !strings.Contains(err.Error(), "is not a directory") {
			t.Errorf("got %v, want an error saying it is not a directory", err)
		}
		if _, err := ReadRendered(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
			t.Errorf("got %v, want an error naming the missing directory", err)
		}
	})
}
