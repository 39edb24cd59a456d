package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// layers rank the project's top-level directories: a package imports, in its code and its tests,
// only packages of a lower rank, or of its own directory (and its tests the test support under
// tests/). internal holds leaf libraries, which
// import nothing of the project; the code that talks to a cluster (cluster/) sits beside the KRM
// layer's users, below the commands. Data flows one way: cmd → cluster, impact, fluxcd → fn →
// generators → api → internal.
var layers = map[string]int{
	"internal":   0,
	"api":        1,
	"generators": 2,
	"fn":         3,
	"fluxcd":     4,
	"impact":     4,
	"cluster":    4,
	"cmd":        5,
}

// TestLayers: every import between the project's packages points down the layers.
func TestLayers(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", "./...")
	cmd.Dir = repoRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	top := func(pkg string) string {
		dir, _, _ := strings.Cut(strings.TrimPrefix(pkg, modulePath+"/"), "/")
		return dir
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	checked := 0
	for {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from := top(p.ImportPath)
		rank, ok := layers[from]
		if !ok {
			// tests/ and examples/: test support and programs above every layer.
			continue
		}
		checked++
		check := func(imp string, test bool) {
			if !strings.HasPrefix(imp, modulePath+"/") {
				return
			}
			to := top(imp)
			r, known := layers[to]
			switch {
			case to == from:
			case to == "tests" && test:
				// Test support lives with the tests.
			case !known:
				t.Errorf("%s imports %s, outside the layers", p.ImportPath, imp)
			case r >= rank:
				t.Errorf("%s (layer %s) imports %s (layer %s): imports point down the layers, %v", p.ImportPath, from, imp, to, layers)
			}
		}
		for _, imp := range p.Imports {
			check(imp, false)
		}
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			check(imp, true)
		}
	}
	if checked < 10 {
		t.Fatalf("go list found %d packages of the layers, want the project's", checked)
	}
}
