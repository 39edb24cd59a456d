package generators

import (
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestTemplateFilesListed: every file of templates/ is embedded, as a script render can execute or
// as a part, and parses.
func TestTemplateFilesListed(t *testing.T) {
	entries, err := os.ReadDir("templates")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, p := range partTemplates {
		listed = append(listed, p.name)
	}
	for name := range scriptTemplates {
		listed = append(listed, name)
	}
	for _, e := range entries {
		if !slices.Contains(listed, e.Name()) {
			t.Errorf("templates/%s is not embedded (entrypoint.go)", e.Name())
		}
	}
	for _, p := range partTemplates {
		if !strings.HasPrefix(p.name, "part-") {
			t.Errorf("part %s: parts are named part-*", p.name)
		}
		data, err := os.ReadFile("templates/" + p.name)
		if err != nil || string(data) != p.text {
			t.Errorf("part %s is not the embedded file templates/%s", p.name, p.name)
		}
	}
	for name, tmpl := range scriptTemplates {
		if strings.HasPrefix(name, "part-") {
			t.Errorf("script %s: part-* files hold shared blocks, not scripts", name)
		}
		data, err := os.ReadFile("templates/" + name)
		if err != nil {
			t.Fatal(err)
		}
		// Parses now (a syntax error panics here, not only in the first render that needs it).
		if got := tmpl.parsed(); got.Name() != name || got.Tree == nil || len(data) > 0 && len(got.Tree.Root.Nodes) == 0 {
			t.Errorf("script %s does not parse to its file's template", name)
		}
	}
}

// TestScriptTemplatesConcurrentFirstUse: renders in parallel goroutines parse each script once and
// all get the same template (run with -race).
func TestScriptTemplatesConcurrentFirstUse(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for name, tmpl := range scriptTemplates {
				if tmpl.parsed().Lookup("hook") == nil {
					t.Errorf("%s: the parts are not in its set", name)
				}
			}
		})
	}
	wg.Wait()
}
