package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffRenderedOverlays: diff --rendered on what the real kustomize builds from the overlay
// (examples/overlay: a namespace and a name prefix over hello-world) before and after edits of
// the overlay alone, which a diff of the MiniCluster files cannot see: a kustomize images:
// entry (the broker container's image: replaced), an annotation patched onto the headless
// Service (metadata only), and another name prefix (a removal and an addition).
func TestDiffRenderedOverlays(t *testing.T) {
	examples := copyExamples(t)
	overlay := filepath.Join(examples, "overlay")
	work := t.TempDir()
	build := func(name string) string {
		t.Helper()
		res := kustomizeBuild(t, overlay, execFlags...)
		if res.code != 0 {
			t.Fatalf("kustomize build: exit %d\n%s", res.code, res.stderr)
		}
		file := filepath.Join(work, name+".yaml")
		if err := os.WriteFile(file, res.stdout, 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	kustomization := filepath.Join(overlay, "kustomization.yaml")
	original, err := os.ReadFile(kustomization)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(extra string, replace ...string) {
		t.Helper()
		text := string(original) + extra
		for i := 0; i < len(replace); i += 2 {
			text = strings.Replace(text, replace[i], replace[i+1], 1)
		}
		if err := os.WriteFile(kustomization, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := build("before")
	for _, tc := range []struct {
		name, extra string
		replace     []string
		want        []string // lines or parts of lines of the output
	}{
		{name: "image", extra: "images:\n  - name: ubuntu\n    newTag: jammy\n",
			want: []string{"hpc-team-a/team-a-flux-sample: replaced: container flux-sample: image; broker Job team-a-flux-sample-"}},
		{name: "service annotation", extra: "patches:\n  - target: {kind: Service, name: flux-sample}\n    patch: |\n      - op: add\n        path: /metadata/annotations/team\n        value: a\n",
			want: []string{"hpc-team-a/team-a-flux-sample: metadata only; labels or annotations are patched; nothing restarts"}},
		{name: "prefix", replace: []string{"namePrefix: team-a-", "namePrefix: team-b-"},
			want: []string{"hpc-team-a/team-a-flux-sample: removed; broker Job team-a-flux-sample-", "hpc-team-a/team-b-flux-sample: added; broker Job team-b-flux-sample-",
				"renamed to team-b-flux-sample?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edit(tc.extra, tc.replace...)
			after := build(strings.ReplaceAll(tc.name, " ", "-"))
			res := run(t, nil, work, fnBinary(t), "diff", "--rendered", before, after)
			if res.code != 0 {
				t.Fatalf("diff: exit %d\n%s", res.code, res.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(res.stdout), w) {
					t.Errorf("diff --rendered lacks %q:\n%s", w, res.stdout)
				}
			}
		})
	}
}

// TestDiffBase: diff --base on a scratch Git repository, from its top directory and from a
// subdirectory: a committed command edit in the working tree is a replacement, a MiniCluster
// file added since the revision an addition, a path that the revision lacks holds none there,
// and an invalid MiniCluster at the revision is named with the revision.
func TestDiffBase(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if res := run(t, nil, repo, "git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...); res.code != 0 {
			t.Fatalf("git %s: %s", strings.Join(args, " "), res.stderr)
		}
	}
	write := func(rel, text string) {
		t.Helper()
		file := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mc := func(name, command string) string {
		return "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata:\n  name: " + name +
			"\nspec:\n  size: 2\n  containers:\n  - image: ubuntu:noble\n    command: " + command + "\n"
	}
	git("init", "--quiet", "--initial-branch=main")
	write("hpc/hello.yaml", mc("hello", "echo one"))
	write("hpc/kustomization.yaml", "resources: []\n")
	git("add", ".")
	git("commit", "--quiet", "-m", "one")
	write("hpc/hello.yaml", mc("hello", "echo two"))
	write("hpc/team/extra.yaml", mc("extra", "hostname"))
	write("new/later.yaml", mc("later", "hostname"))

	fn := fnBinary(t)
	res := run(t, nil, repo, fn, "diff", "--base", "main", "hpc", "new")
	out := string(res.stdout)
	if res.code != 0 || !strings.Contains(out, "hello: replaced: spec.containers[0].command; broker Job hello-") ||
		!strings.Contains(out, "extra: added") || !strings.Contains(out, "later: added") {
		t.Errorf("diff --base main hpc new: exit %d\n%s%s", res.code, out, res.stderr)
	}
	res = run(t, nil, filepath.Join(repo, "hpc"), fn, "diff", "--base", "main", "--output", "markdown", "--fail-on", "replaced")
	if res.code != 1 || !strings.Contains(string(res.stdout), "| hello | **replaced** | `spec.containers[0].command` |") ||
		!strings.Contains(string(res.stderr), "error: the change has impacts that --fail-on names: replaced: hello") {
		t.Errorf("diff --base main from hpc/ with --fail-on replaced: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	write("hpc/hello.yaml", strings.Replace(mc("hello", "echo two"), "size: 2", "size: 0", 1))
	git("commit", "--quiet", "-am", "broken")
	write("hpc/hello.yaml", mc("hello", "echo two"))
	res = run(t, nil, repo, fn, "diff", "--base", "HEAD", "hpc")
	if res.code == 0 || !strings.Contains(string(res.stderr), "hpc/hello.yaml") || !strings.Contains(string(res.stderr), "the MiniClusters at HEAD are invalid") {
		t.Errorf("diff --base HEAD with an invalid MiniCluster at HEAD: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
