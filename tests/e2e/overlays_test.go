package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// TestTwoOverlaysOneNamespace: examples/overlay and a copy of it with another namePrefix, both
// in one namespace, built with the real kustomize. They must not share an object name (one
// certificate Secret each, named by the Service that owns it), and neither headless Service may
// select the other's broker pods. tests/integration applies the same pair to a kube-apiserver.
func TestTwoOverlaysOneNamespace(t *testing.T) {
	kustomizeBinary(t)
	dir := copyExamples(t)
	kfile, err := os.ReadFile(filepath.Join(dir, "overlay", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(string(kfile), "namePrefix: team-a-", "namePrefix: team-b-", 1)
	if other == string(kfile) {
		t.Fatal("examples/overlay no longer sets namePrefix: team-a-")
	}
	copyDir(t, filepath.Join(dir, "overlay"), filepath.Join(dir, "overlay-b"))
	if err := os.WriteFile(filepath.Join(dir, "overlay-b", "kustomization.yaml"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}

	var sets []*manifests
	for _, o := range []string{"overlay", "overlay-b"} {
		res := kustomizeBuild(t, filepath.Join(dir, o), execFlags...)
		if res.code != 0 {
			t.Fatalf("kustomize build %s exited %d\nstderr:\n%s", o, res.code, res.stderr)
		}
		m, err := decodeManifests(res.stdout)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, m)
	}
	names := map[string]bool{}
	for _, o := range sets[0].All {
		names[o.String()] = true
	}
	for _, o := range sets[1].All {
		if names[o.String()] {
			t.Errorf("%s is in both overlays", o)
		}
	}
	for i, m := range sets {
		other := sets[1-i]
		brokers := jobsWith(m, componentBroker)
		if len(m.Services) != 1 || len(brokers) != 1 {
			t.Fatalf("want one Service and one broker Job, got %d and %d", len(m.Services), len(brokers))
		}
		svc, job := m.Services[0], brokers[0]
		sel := labels.SelectorFromSet(svc.Spec.Selector)
		if !sel.Matches(labels.Set(job.Spec.Template.Labels)) {
			t.Errorf("Service/%s selector %v does not select its own broker pods %v", svc.Name, svc.Spec.Selector, job.Spec.Template.Labels)
		}
		for _, j := range other.Jobs {
			if sel.Matches(labels.Set(j.Spec.Template.Labels)) {
				t.Errorf("Service/%s selector %v selects the pods of the other overlay's Job/%s", svc.Name, svc.Spec.Selector, j.Name)
			}
		}
		if kind, name := curveSource(job); kind != "Secret" || name != svc.Name {
			t.Errorf("Job/%s: certificate from %s %q, want the Secret named after Service/%s", job.Name, kind, name, svc.Name)
		}
	}
}
