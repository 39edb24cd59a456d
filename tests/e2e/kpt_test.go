package e2e

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// The kpt tests run the real kpt (KPT, built by `make unit` from tools/kpt) on a copy of
// examples/kpt laid out as in the repository, so the Kptfile's `exec: ../../bin/minicluster-fn`
// works unchanged: <tmp>/examples/kpt and <tmp>/bin/minicluster-fn (the binary under test).

func kptBinary(t testing.TB) string { return tool(t, "KPT", "kpt") }

// newKptPackage copies examples/kpt into a temporary directory and returns the package directory.
func newKptPackage(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "examples", "kpt")
	copyDir(t, filepath.Join(repoRoot(t), "examples", "kpt"), pkg)
	if err := os.Mkdir(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(fnBinary(t), filepath.Join(root, "bin", "minicluster-fn")); err != nil {
		t.Fatal(err)
	}
	return pkg
}

// kpt runs kpt with the working directory dir and fails the test if it does not exit with
// wantCode; it returns stdout and stderr together, which is where kpt reports.
func kpt(t *testing.T, dir string, wantCode int, args ...string) string {
	t.Helper()
	res := run(t, nil, dir, kptBinary(t), args...)
	out := string(res.stdout) + string(res.stderr)
	if res.code != wantCode {
		t.Fatalf("kpt %s (in %s): exit %d, want %d\n%s", strings.Join(args, " "), dir, res.code, wantCode, out)
	}
	return out
}

// packageTree is every file of a package by slash path, and every directory with a trailing "/".
func packageTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	tree := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			tree[filepath.ToSlash(rel)+"/"] = nil
			return nil
		}
		b, err := os.ReadFile(p)
		tree[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func treeDiff(before, after map[string][]byte) []string {
	var diffs []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			diffs = append(diffs, "removed "+p)
		} else if !bytes.Equal(a, b) {
			diffs = append(diffs, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, "added "+p)
		}
	}
	slices.Sort(diffs)
	return diffs
}

// renderedObjects decodes a YAML stream into objects keyed by kind/name.
func renderedObjects(t *testing.T, stream []byte) map[string]map[string]any {
	t.Helper()
	docs, err := splitDocuments(stream)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]map[string]any{}
	for _, doc := range docs {
		var u unstructured.Unstructured
		if err := sigsyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("decoding %s: %v", doc, err)
		}
		key := u.GetKind() + "/" + u.GetName()
		if _, dup := objs[key]; dup {
			t.Errorf("%s is in the output twice", key)
		}
		objs[key] = u.Object
	}
	return objs
}

// checkRenderedPackage checks a package after `kpt fn render`: the package's own files and
// directories are those of want, unchanged, each generated object is alone in <kind>_<name>.yaml
// next to the MiniCluster, with no directory besides the package's own (kpt deletes the files of
// objects that are gone, never a directory, so one would be left empty after a rename), and the
// generated objects are exactly, and with the same content, what `minicluster-fn render` prints
// for the package's MiniCluster.
func checkRenderedPackage(t *testing.T, pkg string, want map[string][]byte) {
	t.Helper()
	tree := packageTree(t, pkg)
	for f, b := range want {
		if !bytes.Equal(tree[f], b) {
			t.Errorf("%s changed:\n--- now ---\n%s\n--- before ---\n%s", f, tree[f], b)
		}
	}
	mc := readMiniCluster(t, want["minicluster.yaml"])
	var stream []byte
	fromFiles := map[string]map[string]any{}
	for p, b := range tree {
		if _, own := want[p]; own {
			continue
		}
		if strings.HasSuffix(p, "/") {
			t.Errorf("%s: a directory that is not the package's own", p)
			continue
		}
		objs := renderedObjects(t, b)
		if len(objs) != 1 {
			t.Errorf("%s holds %d objects, want 1", p, len(objs))
		}
		for key, obj := range objs {
			kind, name, _ := strings.Cut(key, "/")
			if want := strings.ToLower(kind) + "_" + name + ".yaml"; p != want {
				t.Errorf("%s holds %s: want it in %s, next to the MiniCluster", p, key, want)
			}
			fromFiles[key] = obj
		}
		stream = append(append(stream, b...), "\n---\n"...)
	}
	m, err := decodeManifests(stream)
	if err != nil {
		t.Fatalf("decoding the generated files: %v", err)
	}
	checkManifestSet(t, m, mc)

	res := run(t, nil, pkg, fnBinary(t), "render", "minicluster.yaml")
	if res.code != 0 {
		t.Fatalf("minicluster-fn render minicluster.yaml: exit %d\n%s", res.code, res.stderr)
	}
	fromRender := renderedObjects(t, res.stdout)
	for key, obj := range fromRender {
		if got, ok := fromFiles[key]; !ok {
			t.Errorf("%s: printed by minicluster-fn render, but not written by kpt fn render", key)
		} else if !reflect.DeepEqual(got, obj) {
			t.Errorf("%s: the file kpt wrote differs from minicluster-fn render:\n--- kpt ---\n%s\n--- render ---\n%s", key, mustYAML(t, got), mustYAML(t, obj))
		}
	}
	for key := range fromFiles {
		if _, ok := fromRender[key]; !ok {
			t.Errorf("%s: in the package, but minicluster-fn render does not print it: a leftover of an earlier render", key)
		}
	}
}

// editMiniCluster rewrites minicluster.yaml of pkg with replace and returns the package's files
// as they must stay.
func editMiniCluster(t *testing.T, pkg string, want map[string][]byte, replace ...string) map[string][]byte {
	t.Helper()
	b := string(want["minicluster.yaml"])
	for i := 0; i+1 < len(replace); i += 2 {
		if !strings.Contains(b, replace[i]) {
			t.Fatalf("minicluster.yaml has no %q to replace", replace[i])
		}
		b = strings.Replace(b, replace[i], replace[i+1], 1)
	}
	if err := os.WriteFile(filepath.Join(pkg, "minicluster.yaml"), []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := maps.Clone(want)
	edited["minicluster.yaml"] = []byte(b)
	return edited
}

func TestKptRender(t *testing.T) {
	kptBinary(t)
	pkg := newKptPackage(t)
	want := packageTree(t, pkg)

	kpt(t, pkg, 0, "fn", "render", "--allow-exec")
	checkRenderedPackage(t, pkg, want)
	first := packageTree(t, pkg)

	// kpt feeds the earlier output back in: a second render must change nothing.
	kpt(t, pkg, 0, "fn", "render", "--allow-exec")
	if d := treeDiff(first, packageTree(t, pkg)); len(d) > 0 {
		t.Errorf("a second render changed the package: %v", d)
	}

	// A new command changes the broker Job's name (its hash): the old Job's file must go.
	want = editMiniCluster(t, pkg, want, "size: 4", "size: 2", "command: echo hello world", "command: hostname")
	kpt(t, pkg, 0, "fn", "render", "--allow-exec")
	checkRenderedPackage(t, pkg, want)
	if d := treeDiff(first, packageTree(t, pkg)); !slices.ContainsFunc(d, func(s string) bool { return strings.HasPrefix(s, "removed job_flux-kpt-") }) {
		t.Errorf("the broker Job file of the first render is still there after the command changed: %v", d)
	}

	// A renamed MiniCluster: nothing of the old name may stay, not even an empty directory
	// (checkRenderedPackage allows none but the package's own).
	want = editMiniCluster(t, pkg, want, "name: flux-kpt", "name: flux-renamed")
	out := kpt(t, pkg, 0, "fn", "render", "--allow-exec")
	checkRenderedPackage(t, pkg, want)
	for p := range packageTree(t, pkg) {
		if strings.Contains(p, "flux-kpt") {
			t.Errorf("%s is left over from the MiniCluster's old name", p)
		}
	}
	if !strings.Contains(out, `generated earlier for MiniCluster "flux-kpt"`) {
		t.Errorf("kpt does not show that the old objects were removed:\n%s", out)
	}
}

// TestKptFnEval runs the function once with `kpt fn eval --exec`, as the README shows: it writes
// the same package as `kpt fn render`.
func TestKptFnEval(t *testing.T) {
	kptBinary(t)
	rendered := newKptPackage(t)
	kpt(t, rendered, 0, "fn", "render", "--allow-exec")

	pkg := newKptPackage(t)
	want := packageTree(t, pkg)
	kpt(t, pkg, 0, "fn", "eval", "--exec", "../../bin/minicluster-fn", "--fn-config", "minicluster.yaml", ".")
	checkRenderedPackage(t, pkg, want)
	if d := treeDiff(packageTree(t, rendered), packageTree(t, pkg)); len(d) > 0 {
		t.Errorf("kpt fn eval wrote another package than kpt fn render: %v", d)
	}
}

// TestKptBadInput: a kpt package with two MiniClusters of one name is an error naming both files
// and leaves the package as it was; settings given to kpt that the function ignores, and a
// MiniCluster without local-config, render with a warning.
func TestKptBadInput(t *testing.T) {
	kptBinary(t)

	t.Run("duplicate-name", func(t *testing.T) {
		pkg := newKptPackage(t)
		mc, err := os.ReadFile(filepath.Join(pkg, "minicluster.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(pkg, "team-b"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "team-b", "minicluster.yaml"), mc, 0o644); err != nil {
			t.Fatal(err)
		}
		before := packageTree(t, pkg)
		out := kpt(t, pkg, 1, "fn", "render", "--allow-exec")
		if !strings.Contains(out, `MiniCluster "flux-kpt" is defined twice: in minicluster.yaml and in team-b/minicluster.yaml`) {
			t.Errorf("the error does not name both files:\n%s", out)
		}
		if d := treeDiff(before, packageTree(t, pkg)); len(d) > 0 {
			t.Errorf("a failed render changed the package: %v", d)
		}
	})

	// `-- key=value` makes a ConfigMap functionConfig, which a user may take for settings.
	t.Run("functionconfig-not-minicluster", func(t *testing.T) {
		pkg := newKptPackage(t)
		want := packageTree(t, pkg)
		out := kpt(t, pkg, 0, "fn", "eval", "--exec", "../../bin/minicluster-fn", ".", "--", "size=2")
		if !strings.Contains(out, "the functionConfig ConfigMap/function-input is not a MiniCluster and is ignored") {
			t.Errorf("no warning that the key=value settings are ignored:\n%s", out)
		}
		checkRenderedPackage(t, pkg, want)
	})

	t.Run("missing-local-config", func(t *testing.T) {
		pkg := newKptPackage(t)
		want := editMiniCluster(t, pkg, packageTree(t, pkg), "  annotations:\n    config.kubernetes.io/local-config: \"true\"\n", "")
		results := t.TempDir()
		kpt(t, pkg, 0, "fn", "render", "--allow-exec", "--results-dir", results)
		checkRenderedPackage(t, pkg, want)
		b, err := os.ReadFile(filepath.Join(results, "results.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Items []struct {
				Results []krmResult `json:"results"`
			} `json:"items"`
		}
		if err := sigsyaml.Unmarshal(b, &list); err != nil {
			t.Fatalf("kpt's results.yaml: %v\n%s", err, b)
		}
		var warned bool
		for _, item := range list.Items {
			for _, r := range item.Results {
				warned = warned || r.Severity == "warning" && r.Field != nil && r.Field.Path == "metadata.annotations" &&
					r.File != nil && r.File.Path == "minicluster.yaml" && strings.Contains(r.Message, "config.kubernetes.io/local-config")
			}
		}
		if !warned {
			t.Errorf("no warning about the missing local-config annotation of minicluster.yaml in kpt's results:\n%s", b)
		}
	})
}

// TestKptCommonFailures pins the kpt behaviour the README warns about: exec functions need
// --allow-exec, and an exec path is resolved against the directory kpt runs in, not the package.
func TestKptCommonFailures(t *testing.T) {
	kptBinary(t)
	pkg := newKptPackage(t)
	before := packageTree(t, pkg)

	out := kpt(t, pkg, 1, "fn", "render")
	if !strings.Contains(out, "--allow-exec") {
		t.Errorf("kpt fn render without --allow-exec does not mention the flag:\n%s", out)
	}
	// From the package's parent, ../../bin/minicluster-fn points outside the layout.
	out = kpt(t, filepath.Dir(pkg), 1, "fn", "render", "--allow-exec", "kpt")
	if !strings.Contains(out, "../../bin/minicluster-fn: no such file or directory") {
		t.Errorf("kpt fn render from the parent directory did not fail on the exec path:\n%s", out)
	}
	if d := treeDiff(before, packageTree(t, pkg)); len(d) > 0 {
		t.Errorf("a failed render changed the package: %v", d)
	}
}

// TestKptfileImageVariant: the Kptfile's comment shows the image to use instead of the exec line;
// it must be the project's image (the container tests run the function from an image).
func TestKptfileImageVariant(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "kpt", "Kptfile"))
	if err != nil {
		t.Fatal(err)
	}
	var images []string
	for _, line := range strings.Split(string(b), "\n") {
		if _, image, ok := strings.Cut(line, "- image: "); ok && strings.HasPrefix(strings.TrimSpace(line), "#") {
			images = append(images, strings.TrimSpace(image))
		}
	}
	if len(images) != 1 || !strings.HasPrefix(images[0], version.ImageRepository+":v") {
		t.Errorf("examples/kpt/Kptfile shows the images %q, want one %s:<release>", images, version.ImageRepository)
	}
}
