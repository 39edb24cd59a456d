package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/minicluster-fn/minicluster-fn/internal/version"
)

// TestImageReferencesMatchTheBuild: the image is not published, so a user who follows the docs or
// an example must find the reference that `make image` tags. Every mention of the project's image
// with a tag, in the docs, examples and goldens, names exactly the Makefile's default build, and
// the Makefile's defaults are the binary's.
func TestImageReferencesMatchTheBuild(t *testing.T) {
	root := repoRoot(t)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	for variable, want := range map[string]string{"VERSION": version.Version, "IMAGE_REPOSITORY": version.ImageRepository} {
		m := regexp.MustCompile(`(?m)^` + variable + ` \?= (\S+)$`).FindSubmatch(makefile)
		if m == nil || string(m[1]) != want {
			t.Errorf("Makefile: %s ?= %q, want %q (the default in internal/version)", variable, m, want)
		}
	}
	want := version.ImageRepository + ":" + version.Version
	reference := regexp.MustCompile(regexp.QuoteMeta(version.ImageRepository) + `:[\w.-]+`)
	found := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == ".git" || name == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".md" && ext != ".yaml" && ext != ".yml" && d.Name() != "Kptfile" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, ref := range reference.FindAllString(line, -1) {
				found++
				if ref != want {
					rel, _ := filepath.Rel(root, p)
					t.Errorf("%s:%d names the image %s; `make image` builds %s", rel, i+1, ref, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatalf("no reference to %s found under %s: the test looks in the wrong place", version.ImageRepository, root)
	}
}
