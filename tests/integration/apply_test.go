package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// minCorpusApplied is how many corpus files must render and apply (32 of 33 render; the one
// that does not uses a field the operator dropped).
const minCorpusApplied = 30

// renderCases are the MiniCluster files to apply: every example, and every file of the
// flux-operator examples corpus in ../shared when it is there.
func renderCases(t *testing.T) (examples, corpus []string) {
	t.Helper()
	root := repoRoot(t)
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*", "minicluster.yaml"))
	if err != nil || len(examples) < 5 {
		t.Fatalf("found %d examples in %s/examples (%v), want at least 5", len(examples), root, err)
	}
	dir := filepath.Join(root, "..", "shared", "corpus", "flux-operator-examples")
	if _, err := os.Stat(dir); err != nil {
		t.Logf("%s not found: corpus files are not applied", dir)
		return examples, nil
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			corpus = append(corpus, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(corpus)
	return examples, corpus
}

// testApplyAll server-side applies the output of every example and corpus file with strict
// field validation, expects no warnings, and applies it again: nothing may change.
func (c *cluster) testApplyAll(t *testing.T) {
	examples, corpus := renderCases(t)
	root := repoRoot(t)
	applied := 0
	for _, file := range append(examples, corpus...) {
		rel, _ := filepath.Rel(filepath.Dir(root), file)
		t.Run(rel, func(t *testing.T) {
			out, err := runRender(t, file)
			if err != nil {
				if slices.Contains(corpus, file) {
					t.Skipf("render rejects this corpus file (tests/e2e checks the message): %v", err)
				}
				t.Fatal(err)
			}
			objs := decodeStream(t, out)
			find(t, objs, "Job", "broker")
			ns := c.namespace(t, "apply", nil)
			c.warnings.take()
			first := c.apply(t, ns, objs)
			if w := c.warnings.take(); len(w) > 0 {
				t.Errorf("first apply: warnings %q", w)
			}
			second := c.apply(t, ns, objs)
			if w := c.warnings.take(); len(w) > 0 {
				t.Errorf("second apply: warnings %q", w)
			}
			for i := range first {
				if a, b := first[i].GetResourceVersion(), second[i].GetResourceVersion(); a != b {
					t.Errorf("%s changed on the second apply: resourceVersion %s -> %s", ref(first[i]), a, b)
				}
			}
			if slices.Contains(corpus, file) {
				applied++
			}
			t.Logf("%d objects applied twice into %s", len(objs), ns)
		})
	}
	if len(corpus) > 0 && applied < minCorpusApplied {
		t.Errorf("%d of %d corpus files applied, want at least %d", applied, len(corpus), minCorpusApplied)
	}
}

// runRender renders a file and returns the stream, or the reason it was rejected.
func runRender(t *testing.T, file string) ([]byte, error) {
	t.Helper()
	res := runFn(t, os.Environ(), "", "render", file)
	if res.code != 0 {
		return nil, &renderError{res}
	}
	return []byte(res.stdout), nil
}

type renderError struct{ res fnResult }

func (e *renderError) Error() string { return "render failed: " + e.res.String() }

// scalable is a MiniCluster that can grow to maxSize without a new Job.
const scalable = `apiVersion: flux-framework.org/v1alpha2
kind: MiniCluster
metadata:
  name: grow
spec:
  size: SIZE
  maxSize: 6
  containers:
    - image: IMAGE
      command: COMMAND
`

func scalableMiniCluster(size, image, command string) string {
	return strings.NewReplacer("SIZE", size, "IMAGE", image, "COMMAND", command).Replace(scalable)
}

// testJobNames: a changed command or image gives the broker Job a new name, so applying the new
// output never meets "spec.template: field is immutable"; a size change within maxSize keeps the
// name and the server patches the same Job.
func (c *cluster) testJobNames(t *testing.T) {
	ns := c.namespace(t, "jobs", nil)
	base := renderText(t, scalableMiniCluster("2", "ubuntu:noble", "echo one"))
	baseJob := find(t, c.apply(t, ns, base), "Job", "broker")

	for _, tc := range []struct{ name, image, command string }{
		{"command", "ubuntu:noble", "echo two"},
		{"image", "rockylinux:9", "echo one"},
	} {
		t.Run("changed "+tc.name, func(t *testing.T) {
			objs := renderText(t, scalableMiniCluster("2", tc.image, tc.command))
			job := find(t, objs, "Job", "broker")
			if job.GetName() == baseJob.GetName() {
				t.Fatalf("a changed %s kept the Job name %s", tc.name, job.GetName())
			}
			// The whole new output applies over the old one: the old Job stays until a GitOps
			// tool prunes it, and nothing is immutable.
			applied := find(t, c.apply(t, ns, objs), "Job", "broker")
			if applied.GetUID() == baseJob.GetUID() {
				t.Errorf("the new Job %s has the old Job's uid", applied.GetName())
			}
		})
	}

	t.Run("size within maxSize", func(t *testing.T) {
		objs := renderText(t, scalableMiniCluster("5", "ubuntu:noble", "echo one"))
		job := find(t, objs, "Job", "broker")
		if job.GetName() != baseJob.GetName() {
			t.Fatalf("a size change renamed the Job: %s -> %s", baseJob.GetName(), job.GetName())
		}
		applied := find(t, c.apply(t, ns, objs), "Job", "broker")
		if applied.GetUID() != baseJob.GetUID() {
			t.Errorf("the Job was replaced (uid %s -> %s), want it patched", baseJob.GetUID(), applied.GetUID())
		}
		for _, field := range []string{"parallelism", "completions"} {
			if got := nestedInt(t, applied, "spec", field); got != 5 {
				t.Errorf("spec.%s = %d after the apply, want 5", field, got)
			}
		}
	})
}

func nestedInt(t *testing.T, o *unstructured.Unstructured, fields ...string) int64 {
	t.Helper()
	v, ok, err := unstructured.NestedInt64(o.Object, fields...)
	if err != nil || !ok {
		t.Fatalf("%s: %s: %v (present %v)", ref(o), strings.Join(fields, "."), err, ok)
	}
	return v
}

// testSizeLimit: the largest size render accepts is the largest the API server accepts for the
// broker Job (an Indexed Job's parallelism), and one more is refused by both.
func (c *cluster) testSizeLimit(t *testing.T) {
	const limit = 100_000
	ns := c.namespace(t, "size", nil)
	mc := func(size int) string {
		return strings.Replace(scalableMiniCluster(strconv.Itoa(size), "ubuntu:noble", "hostname"), "maxSize: 6", "maxSize: "+strconv.Itoa(size), 1)
	}
	job := find(t, c.apply(t, ns, renderText(t, mc(limit))), "Job", "broker")
	if got := nestedInt(t, job, "spec", "parallelism"); got != limit {
		t.Fatalf("spec.parallelism = %d, want %d", got, limit)
	}

	res := runFn(t, nil, mc(limit+1), "render", "-")
	if res.code == 0 || res.stdout != "" || !strings.Contains(res.stderr, "spec.size: Invalid value: 100001: must not exceed 100000") {
		t.Errorf("render of size %d: %s; want spec.size refused and no output", limit+1, res)
	}

	patch := fmt.Appendf(nil, `{"spec":{"parallelism":%d,"completions":%d}}`, limit+1, limit+1)
	_, err := c.cs.BatchV1().Jobs(ns).Patch(context.Background(), job.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.parallelism: Invalid value: 100001: must be less than or equal to 100000") {
		t.Errorf("the API server accepted parallelism %d, or refused it for another reason: %v", limit+1, err)
	}
}
