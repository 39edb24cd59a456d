package generators

import (
	"sync"
	"testing"
)

// TestScriptTemplatesConcurrentFirstUse: renders in parallel goroutines parse each script once and
// all get the same template (run with -race).
func TestScriptTemplatesConcurrentFirstUse(t *testing.T) {
	t.Parallel()
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
