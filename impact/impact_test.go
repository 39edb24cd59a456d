package impact

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/minicluster-fn/minicluster-fn/fn"
	"github.com/minicluster-fn/minicluster-fn/internal/objyaml"
)

// persistent is a MiniCluster that runs until deleted, with room to grow.
const persistent = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: steady
spec:
  size: 2
  maxSize: 4
  interactive: true
  containers:
  - image: ubuntu:noble
    environment:
      MODE: fast
`

// sets renders the MiniCluster files (name → text) as the diff command does.
func sets(t testing.TB, files map[string]string) []Set {
	t.Helper()
	var nodes []*yaml.RNode
	for file, text := range files {
		docs, err := (&kio.ByteReader{Reader: strings.NewReader(text), SetAnnotations: map[string]string{kioutil.PathAnnotation: file}}).Read()
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, docs...)
	}
	manifests, err := fn.Processor{Standalone: true}.Generate(&framework.ResourceList{Items: nodes})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var out []Set
	for _, m := range manifests {
		s, err := FromManifestSet(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// rendered renders the files and reads the output back as rendered output, one file per input.
func rendered(t testing.TB, files map[string]string) []Set {
	t.Helper()
	var out []RenderedFile
	for file, text := range files {
		var buf bytes.Buffer
		for _, s := range sets(t, map[string]string{file: text}) {
			for _, o := range s.Objects {
				data, err := objyaml.Marshal(o.Object)
				if err != nil {
					t.Fatal(err)
				}
				buf.WriteString("---\n")
				buf.Write(data)
			}
		}
		out = append(out, RenderedFile{Path: file, Data: buf.Bytes()})
	}
	s, err := RenderedSets(out)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func edit(text string, replace ...string) string {
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(text, replace[i]) {
			panic("no " + replace[i])
		}
		text = strings.Replace(text, replace[i], replace[i+1], 1)
	}
	return text
}

// TestImpactOfEachKind: one edit for every impact kind, compared from the MiniCluster files and
// from the rendered output; the causes are the MiniCluster's fields, or the objects' in a
// user's terms.
func TestImpactOfEachKind(t *testing.T) {
	for _, tc := range []struct {
		name          string
		new           string
		kind          Kind
		causes        []string
		renderedCause string // a cause found in rendered output
	}{
		{name: "unchanged", new: persistent, kind: Unchanged},
		{name: "label", new: edit(persistent, "  name: steady\n", "  name: steady\n  labels: {team: a}\n"), kind: Unchanged},
		{name: "resize within maxSize", new: edit(persistent, "size: 2", "size: 3"), kind: ResizedInPlace,
			causes: []string{"spec.size"}, renderedCause: "broker Job parallelism and completions"},
		{name: "command", new: edit(persistent, "    environment:", "    command: sleep infinity\n    environment:"), kind: Replaced,
			causes: []string{"spec.containers[0].command"}, renderedCause: "container steady: script wait-0.sh (its command and setup)"},
		{name: "environment", new: edit(persistent, "MODE: fast", "MODE: slow"), kind: Replaced,
			causes: []string{"spec.containers[0].environment.MODE"}, renderedCause: "container steady: env MODE"},
		{name: "image and size beyond maxSize", new: edit(persistent, "ubuntu:noble", "ubuntu:jammy", "size: 2", "size: 5", "maxSize: 4", "maxSize: 6"), kind: Replaced,
			causes: []string{"spec.containers[0].image", "spec.maxSize"}, renderedCause: "container steady: image"},
		{name: "headless Service", new: edit(persistent, "  interactive: true\n", "  interactive: true\n  network: {headlessName: calm}\n"), kind: NewCertificate,
			causes: []string{"spec.network.headlessName"}, renderedCause: "certificate Secret/steady (made by the keygen Job) → Secret/calm (made by the keygen Job)"},
		{name: "curve-kind", new: edit(persistent, "  name: steady\n", "  name: steady\n  annotations: {minicluster-fn.dev/curve-kind: ConfigMap}\n"), kind: NewCertificate,
			causes: []string{"metadata.annotations[minicluster-fn.dev/curve-kind]"}, renderedCause: "certificate Secret/steady (made by the keygen Job) → ConfigMap/steady (made by the keygen Job)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := Compare(sets(t, map[string]string{"a.yaml": persistent}), sets(t, map[string]string{"a.yaml": tc.new}))
			if len(results) != 1 {
				t.Fatalf("%d results: %+v", len(results), results)
			}
			r := results[0]
			if r.Impact != tc.kind {
				t.Errorf("impact %s, want %s: %+v", r.Impact, tc.kind, r)
			}
			if tc.causes != nil && !slices.Equal(r.Causes, tc.causes) {
				t.Errorf("causes %q, want %q", r.Causes, tc.causes)
			}
			t.Logf("%s: %s: %s", r.Impact, strings.Join(r.Causes, ", "), r.Effect)
			fromRender := Compare(rendered(t, map[string]string{"a.yaml": persistent}), rendered(t, map[string]string{"a.yaml": tc.new}))
			if len(fromRender) != 1 || fromRender[0].Impact != r.Impact {
				t.Fatalf("from rendered output: %+v, want impact %s", fromRender, r.Impact)
			}
			if tc.renderedCause != "" && !slices.Contains(fromRender[0].Causes, tc.renderedCause) {
				t.Errorf("rendered causes %q lack %q", fromRender[0].Causes, tc.renderedCause)
			}
			// The size and its bound read alike from the broker Job's annotation.
			if r.Impact == ResizedInPlace && fromRender[0].Effect != r.Effect {
				t.Errorf("from rendered output the effect is %q, from the MiniClusters %q", fromRender[0].Effect, r.Effect)
			}
		})
	}
}

// TestImpactOfResizeUnderKueue: the same resize of a MiniCluster whose broker Job Kueue queues
// patches the same Job, which Kueue then requeues: running work ends.
func TestImpactOfResizeUnderKueue(t *testing.T) {
	queued := edit(persistent, "  interactive: true\n", "  interactive: true\n  jobLabels: {kueue.x-k8s.io/queue-name: hpc}\n")
	resized := edit(queued, "size: 2", "size: 3")
	for name, results := range map[string][]Result{
		"MiniClusters": Compare(sets(t, map[string]string{"a.yaml": queued}), sets(t, map[string]string{"a.yaml": resized})),
		"rendered":     Compare(rendered(t, map[string]string{"a.yaml": queued}), rendered(t, map[string]string{"a.yaml": resized})),
	} {
		if len(results) != 1 || results[0].Impact != Requeued {
			t.Fatalf("%s: %+v, want impact %s", name, results, Requeued)
		}
		if want := "Kueue (LocalQueue hpc) requeues it"; !strings.Contains(results[0].Effect, want) || !strings.Contains(results[0].Effect, "2 → 3") {
			t.Errorf("%s: effect %q, want it to say 2 → 3 and %q", name, results[0].Effect, want)
		}
	}
}

// TestImpactOfRenamesAndRemovals: a MiniCluster removed, one added, one renamed (a removal and
// an addition that say so), two that swap names (each replaced), and one moved to another file
// (unchanged, with a note).
func TestImpactOfRenamesAndRemovals(t *testing.T) {
	other := edit(persistent, "name: steady", "name: other", "MODE: fast", "MODE: other")
	old := sets(t, map[string]string{"a.yaml": persistent, "b.yaml": other,
		"gone.yaml": edit(persistent, "name: steady", "name: gone"), "old-name.yaml": edit(persistent, "name: steady", "name: old-name", "size: 2", "size: 1")})
	new := sets(t, map[string]string{"a.yaml": edit(other, "name: other", "name: steady"), "c.yaml": edit(persistent, "name: steady", "name: other"),
		"new.yaml":      edit(persistent, "name: steady", "name: fresh", "interactive: true", "interactive: false"),
		"old-name.yaml": edit(persistent, "name: steady", "name: new-name", "size: 2", "size: 1")})
	got := map[string]Result{}
	for _, r := range Compare(old, new) {
		got[r.Name] = r
		t.Logf("%s: %s: %q: %s %q", r.Name, r.Impact, r.Causes, r.Effect, r.Notes)
	}
	for name, want := range map[string]Kind{"steady": Replaced, "other": Replaced, "gone": Removed, "fresh": Added, "old-name": Removed, "new-name": Added} {
		if got[name].Impact != want {
			t.Errorf("%s: %s, want %s", name, got[name].Impact, want)
		}
	}
	if !slices.Equal(got["steady"].Causes, []string{"spec.containers[0].environment.MODE"}) {
		t.Errorf("steady's causes: %q", got["steady"].Causes)
	}
	if notes := strings.Join(got["other"].Notes, " "); !strings.Contains(notes, "moved from b.yaml to c.yaml") {
		t.Errorf("other's notes: %q", notes)
	}
	if !strings.Contains(strings.Join(got["old-name"].Notes, " "), "renamed to new-name") || !strings.Contains(strings.Join(got["new-name"].Notes, " "), "renamed from old-name") {
		t.Errorf("the rename is not said: %q, %q", got["old-name"].Notes, got["new-name"].Notes)
	}
	if !strings.Contains(got["gone"].Effect, "certificate Secret/gone is deleted") {
		t.Errorf("gone: %s", got["gone"].Effect)
	}
	if got := Summary(Compare(old, new)); got != "6 MiniClusters: 2 replaced, 2 removed, 2 added" {
		t.Errorf("summary %q", got)
	}
}

// TestImpactOfStableNames: with job-naming: stable the broker Job keeps its name, so a changed
// pod template is a forced replacement of the same Job.
func TestImpactOfStableNames(t *testing.T) {
	stable := edit(persistent, "  name: steady\n", "  name: steady\n  annotations: {minicluster-fn.dev/job-naming: stable}\n")
	r := Compare(sets(t, map[string]string{"a.yaml": stable}), sets(t, map[string]string{"a.yaml": edit(stable, "ubuntu:noble", "ubuntu:jammy")}))
	if len(r) != 1 || r[0].Impact != Replaced || !strings.Contains(r[0].Effect, "broker Job steady is deleted and created again") {
		t.Errorf("%+v", r)
	}
	r = Compare(sets(t, map[string]string{"a.yaml": stable}), sets(t, map[string]string{"a.yaml": edit(stable, "size: 2", "size: 4")}))
	if len(r) != 1 || r[0].Impact != ResizedInPlace {
		t.Errorf("%+v", r)
	}
}

// TestImpactOfObjectEdits: what an overlay's patches do in rendered output: a label on the
// Service only (metadata only), a port of the headless Service (updated: the brokers keep
// running), and the broker Job's backoffLimit under a stable name (patched in place, updated).
func TestImpactOfObjectEdits(t *testing.T) {
	base := rendered(t, map[string]string{"a.yaml": persistent})
	for _, tc := range []struct {
		name string
		edit func(s *Set)
		want Kind
	}{
		{"label", func(s *Set) {
			svc := objectOf(s, "Service")
			labels := svc.GetLabels()
			labels["team"] = "a"
			svc.SetLabels(labels)
		}, MetadataOnly},
		{"service port", func(s *Set) {
			objectOf(s, "Service").Object["spec"].(map[string]any)["ports"] = []any{map[string]any{"port": int64(80)}}
		}, Updated},
		{"keygen Job", func(s *Set) { objectOf(s, "Job").SetName("steady-keygen-00000000") }, Updated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edited := rendered(t, map[string]string{"a.yaml": persistent})
			tc.edit(&edited[0])
			r := Compare(base, edited)
			if r[0].Impact != tc.want {
				t.Errorf("%s, want %s: %+v", r[0].Impact, tc.want, r[0])
			}
			t.Logf("%s: %s %+v", r[0].Impact, r[0].Effect, r[0].Objects)
		})
	}
}

// objectOf is the first object of the kind (the keygen Job is rendered before the broker Job).
func objectOf(s *Set, kind string) *unstructured.Unstructured {
	for _, o := range s.Objects {
		if o.GetKind() == kind {
			return o
		}
	}
	panic("no " + kind)
}
