package fn

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/api/v1alpha2"
	"github.com/minicluster-fn/minicluster-fn/generators"
)

// roundTrip emits v and reads it back with a real YAML parser.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := emitObject(w, v, nil, 0, ""); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	var got any
	if err := sigsyaml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("emitted YAML does not parse: %v\n%s", err, buf.String())
	}
	return got
}

func wantJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	delete(out, "status")
	return out
}

func TestEmitTrickyStrings(t *testing.T) {
	tricky := []string{"", "true", "True", "yes", "Y", "n", "off", "null", "~", "1e3", "1E10", "0x1F", "0o17", "0b1",
		"10:30", "2001-12-14", "-1", "+1", ".5", "1.5", "1_000", ".inf", "-.inf", ".nan", "--x", "-x", "- x",
		"a: b", "a:", ":a", "#c", "x #y", "@x", "%x", "a,b", "[x]", "{x}", "*x", "&x", "!x", "|x", ">x", "'x",
		`"x"`, "?x", "=x", "<<", "64Mi", "10m", "ubuntu:noble", "http://x/y", "multi\nline", "multi\nline\n",
		"multi\nline\n\n", "\nleading newline", " leading space", "trailing space ", "in\tside", "tab\nin\tblock",
		"üñï", "cr\r\nlf", "nul\x00", "bell\a", "ls\u2028sep", "---", "...", "- - -", "a\n---\nb", "a\n  indented\n",
		"a\n\n\nb", "emoji 😀 \U0001F600", "<&>", "back\\slash", "line with trailing spaces   \nnext", "#!/bin/bash\necho \"$x\" 'y' \\\n", "%YAML\nx"}
	for _, s := range tricky {
		obj := map[string]any{"k": s, "list": []any{s, map[string]any{s + "key": s}}}
		if got := roundTrip(t, obj); !reflect.DeepEqual(got, wantJSON(t, obj)) {
			t.Errorf("%q does not survive: got %#v", s, got)
		}
	}
}

func TestEmitNumbersBoolsEmpty(t *testing.T) {
	obj := map[string]any{"i": 8050, "neg": -1, "f": 1.5, "b": true, "n": nil, "m": map[string]any{}, "l": []any{},
		"nested": []any{[]any{"a", 1}, map[string]any{}, []any{}}}
	if got := roundTrip(t, obj); !reflect.DeepEqual(got, wantJSON(t, obj)) {
		t.Errorf("got %#v", got)
	}
}

// TestEmitGeneratedObjects checks every object generated for the examples and the corpus.
func TestEmitGeneratedObjects(t *testing.T) {
	files, _ := filepath.Glob("../examples/*/minicluster.yaml")
	corpus, _ := filepath.Glob("../../shared/corpus/flux-operator-examples/*/*/minicluster*.yaml")
	more, _ := filepath.Glob("../../shared/corpus/flux-operator-examples/*/*/*/minicluster*.yaml")
	files = append(append(files, corpus...), more...)
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mc, errs := v1alpha2.Decode(data)
		if len(errs) > 0 {
			continue
		}
		mc.Default()
		opts, errs := mc.ParseOptions()
		if len(append(errs, mc.Validate(opts)...)) > 0 {
			continue
		}
		objs, _, err := generators.Generate(mc, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			n++
			if got := roundTrip(t, obj); !reflect.DeepEqual(got, wantJSON(t, obj)) {
				t.Errorf("%s: %T %s does not survive the emitter", f, obj, obj.GetName())
			}
		}
	}
	if n < 30 {
		t.Fatalf("only %d objects checked", n)
	}
}
