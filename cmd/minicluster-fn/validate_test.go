package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateHelpExample runs validate's own --help example on the repository's examples, from
// the repository's top directory as a user would: every example is valid, and each gets its line.
func TestValidateHelpExample(t *testing.T) {
	example := strings.TrimSpace(newValidateCmd().Example)
	args, ok := strings.CutPrefix(example, "minicluster-fn validate ")
	if !ok {
		t.Fatalf("validate's example %q does not start with minicluster-fn validate", example)
	}
	t.Chdir("../..")
	files, err := filepath.Glob(args)
	if err != nil || len(files) < 5 {
		t.Fatalf("the example's pattern %q matches %d files (%v)", args, len(files), err)
	}
	out, errOut, err := runCmd(t, "", append([]string{"validate"}, files...)...)
	if err != nil {
		t.Fatalf("validate %s: %v\n%s", args, err, errOut)
	}
	for _, f := range files {
		if !strings.Contains(out, "ok: "+f+": MiniCluster/") {
			t.Errorf("no ok line for %s:\n%s", f, out)
		}
	}
}

// TestValidateExamplesTogether: the project's examples are valid together, as a user who runs
// `minicluster-fn validate examples/` finds them: distinct names, an ok line for every MiniCluster
// file under examples/, and nothing on stderr (no warning or info remark about our own examples).
func TestValidateExamplesTogether(t *testing.T) {
	t.Chdir("../..")
	var files []string
	err := filepath.WalkDir("examples", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "minicluster.yaml" {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) < 7 {
		t.Fatalf("found %d minicluster.yaml files under examples/ (%v)", len(files), err)
	}
	out, errOut, err := runCmd(t, "", "validate", "examples/")
	if err != nil || errOut != "" {
		t.Fatalf("validate examples/: %v\n%s", err, errOut)
	}
	for _, f := range files {
		if !strings.Contains(out, "ok: "+f+": MiniCluster/") {
			t.Errorf("no ok line for %s:\n%s", f, out)
		}
	}
}

// TestValidateOKLinesBesideErrors: a file with an error does not hide that the other files are
// fine, and never reads as fine itself. Each MiniCluster of a file without errors gets its ok
// line; a file with any error gets none (not for its valid MiniCluster either, nor for its
// MiniCluster beside another object): stdout says exactly which files would render. The errors
// get error lines, and the exit is non-zero.
func TestValidateOKLinesBesideErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mc := func(name, size string) string {
		return "apiVersion: flux-framework.org/v1alpha2\nkind: MiniCluster\nmetadata: {name: " + name +
			"}\nspec:\n  size: " + size + "\n  containers: [{image: ubuntu:noble, command: hostname}]\n"
	}
	good := write("good.yaml", mc("good", "2"))
	bad := write("bad.yaml", mc("bad", "-1"))
	mixed := write("mixed.yaml", mc("mixed-ok", "2")+"---\n"+mc("mixed-bad", "-3"))
	withConfigMap := write("with-configmap.yaml", mc("beside", "2")+"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n")
	two := write("two.yaml", mc("two-a", "2")+"---\n"+mc("two-b", "3"))
	broken := write("broken.yaml", "kind: [\n")

	out, errOut, err := runCmd(t, "", "validate", good, bad, mixed, withConfigMap, two, broken)
	if err == nil {
		t.Fatalf("validate exited 0 with invalid files; stderr:\n%s", errOut)
	}
	want := "ok: " + good + ": MiniCluster/good\nok: " + two + ": MiniCluster/two-a\nok: " + two + ": MiniCluster/two-b\n"
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}
	for _, f := range []string{bad + ": MiniCluster/bad: spec.size", mixed + " (document 2): MiniCluster/mixed-bad: spec.size",
		withConfigMap + " (document 2): ConfigMap/settings is in a file that holds a MiniCluster", broken} {
		if !strings.Contains(errOut, "error: "+f) {
			t.Errorf("stderr lacks an error line for %s:\n%s", f, errOut)
		}
	}
}
