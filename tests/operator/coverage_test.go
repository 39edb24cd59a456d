package operator

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// kubernetesTypes are CRD fields that embed a Kubernetes type, copied as a whole by both sides:
// covered when set at all.
var kubernetesTypes = map[string]bool{"securityContext": true, "resources": true}

// TestInputsCoverTheCRD: together, the compared files set every field of the CRD's spec.
func TestInputsCoverTheCRD(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(sharedDir(t), "reference", "flux-framework.org_miniclusters.crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema["properties"].(map[string]any)
	schemaLeaves("spec", props["spec"].(map[string]any), want)
	have := map[string]bool{}
	for _, in := range inputs(t) {
		data, err := os.ReadFile(in.path)
		if err != nil {
			t.Fatal(err)
		}
		var mc map[string]any
		if err := yaml.Unmarshal(data, &mc); err != nil {
			t.Fatal(err)
		}
		valueLeaves("spec", mc["spec"], have)
	}
	var missing []string
	for p := range want {
		if !have[p] {
			missing = append(missing, p)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("%d of %d CRD fields are set by no compared file:\n%s", len(missing), len(want), strings.Join(missing, "\n"))
	}
	t.Logf("%d CRD fields, all set by at least one compared file", len(want))
}

func schemaLeaves(p string, s map[string]any, out map[string]bool) {
	last := p[strings.LastIndexAny(p, ".")+1:]
	if kubernetesTypes[last] {
		out[p] = true
		return
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k, v := range props {
			schemaLeaves(p+"."+k, v.(map[string]any), out)
		}
		return
	}
	if items, ok := s["items"].(map[string]any); ok && s["type"] == "array" {
		if _, ok := items["properties"]; ok {
			schemaLeaves(p+"[]", items, out)
			return
		}
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		if _, ok := ap["properties"]; ok {
			schemaLeaves(p+"{}", ap, out)
			return
		}
	}
	out[p] = true
}

// valueLeaves records the schema paths a value sets ([] for list items, {} for map entries of
// structured maps, matching schemaLeaves).
func valueLeaves(p string, v any, out map[string]bool) {
	out[p] = true
	last := p[strings.LastIndexAny(p, ".")+1:]
	if kubernetesTypes[last] {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		structuredMap := strings.HasSuffix(p, ".volumes") || strings.HasSuffix(p, ".secrets")
		for k, val := range x {
			if structuredMap {
				valueLeaves(p+"{}", val, out)
			} else {
				valueLeaves(p+"."+k, val, out)
			}
		}
	case []any:
		for _, val := range x {
			if _, ok := val.(map[string]any); ok {
				valueLeaves(p+"[]", val, out)
			}
		}
	}
}
