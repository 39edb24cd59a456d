package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// resourceList encodes items (and an optional functionConfig) as a KRM ResourceList.
func resourceList(t testing.TB, items []map[string]any, functionConfig ...map[string]any) []byte {
	t.Helper()
	rl := map[string]any{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": items}
	if len(functionConfig) > 0 {
		rl["functionConfig"] = functionConfig[0]
	}
	b, err := sigsyaml.Marshal(rl)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// krmResult is one entry of a ResourceList's results.
type krmResult struct {
	Severity    string `json:"severity"`
	Message     string `json:"message"`
	ResourceRef *struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
		Namespace  string `json:"namespace"`
	} `json:"resourceRef"`
	Field *struct {
		Path string `json:"path"`
	} `json:"field"`
	File *struct {
		Path  string `json:"path"`
		Index int    `json:"index"`
	} `json:"file"`
}

// parsedList is a ResourceList read back from a function's stdout.
type parsedList struct {
	node    *kyaml.RNode
	items   []*kyaml.RNode
	results []krmResult
}

func parseResourceList(t testing.TB, data []byte) *parsedList {
	t.Helper()
	node, err := kyaml.Parse(string(data))
	if err != nil {
		t.Fatalf("stdout is not YAML: %v\n%s", err, data)
	}
	if node.GetKind() != "ResourceList" {
		t.Fatalf("stdout is a %q, want a ResourceList\n%s", node.GetKind(), data)
	}
	pl := &parsedList{node: node}
	if items, err := node.Pipe(kyaml.Lookup("items")); err != nil {
		t.Fatal(err)
	} else if items != nil {
		pl.items, err = items.Elements()
		if err != nil {
			t.Fatal(err)
		}
	}
	var withResults struct {
		Results []krmResult `json:"results"`
	}
	if err := sigsyaml.Unmarshal(data, &withResults); err != nil {
		t.Fatalf("decoding results: %v", err)
	}
	pl.results = withResults.Results
	return pl
}

func (pl *parsedList) itemStrings(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, it := range pl.items {
		s, err := it.String()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func (pl *parsedList) find(kind, name string) []*kyaml.RNode {
	var out []*kyaml.RNode
	for _, it := range pl.items {
		if it.GetKind() == kind && (name == "" || it.GetName() == name) {
			out = append(out, it)
		}
	}
	return out
}

// decodeItems decodes the Kubernetes objects among the items, leaving out MiniClusters and
// Kptfiles.
func decodeItems(t testing.TB, pl *parsedList) *manifests {
	t.Helper()
	var docs []string
	for _, it := range pl.items {
		switch it.GetKind() {
		case "MiniCluster", "Kptfile":
			continue
		}
		docs = append(docs, it.MustString())
	}
	m, err := decodeManifests([]byte(strings.Join(docs, "---\n")))
	if err != nil {
		t.Fatalf("decoding the items: %v", err)
	}
	return m
}

func helloWorld(t testing.TB) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "hello-world", "minicluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := sigsyaml.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func cloneMap(t testing.TB, in map[string]any) map[string]any {
	t.Helper()
	b, err := sigsyaml.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := sigsyaml.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func setAnnotations(obj map[string]any, kv ...string) {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	for i := 0; i+1 < len(kv); i += 2 {
		ann[kv[i]] = kv[i+1]
	}
}

func miniCluster(name, file string, size int, command string) map[string]any {
	mc := map[string]any{
		"apiVersion": "flux-framework.org/v1alpha2",
		"kind":       "MiniCluster",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"size":       size,
			"containers": []any{map[string]any{"image": "ubuntu:noble", "command": command}},
		},
	}
	setAnnotations(mc, "config.kubernetes.io/local-config", "true")
	if file != "" {
		setAnnotations(mc, "internal.config.kubernetes.io/path", file)
	}
	return mc
}

func TestKRMModes(t *testing.T) {
	fnBin := fnBinary(t)

	// kustomize runs a generator with the MiniCluster as functionConfig and as an item.
	t.Run("kustomize-generator", func(t *testing.T) {
		fc := helloWorld(t)
		item := cloneMap(t, fc)
		// What kustomize v5.8 adds to the item (captured from a real kustomize build).
		setAnnotations(item,
			"config.kubernetes.io/index", "0",
			"internal.config.kubernetes.io/index", "0",
			"internal.config.kubernetes.io/annotations-migration-resource-id", "0",
			"internal.config.kubernetes.io/id", "1",
			"config.k8s.io/id", "1")
		res := run(t, resourceList(t, []map[string]any{item}, fc), "", fnBin)
		if res.code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
		}
		pl := parseResourceList(t, res.stdout)
		// The item is kustomize's own copy of the functionConfig, which it drops anyway; returning
		// it would make kustomize load its OpenAPI schema to copy comments back (see
		// fn.isKustomizeGeneratorCopy).
		if mcs := pl.find("MiniCluster", ""); len(mcs) != 0 {
			t.Errorf("kustomize's copy of the functionConfig came back (%d MiniCluster items)", len(mcs))
		}
		for _, r := range pl.results {
			if r.Severity == "error" {
				t.Errorf("error result: %+v", r)
			}
		}
		for _, it := range pl.items {
			if it.GetKind() == "MiniCluster" {
				continue
			}
			for k := range it.GetAnnotations() {
				if strings.HasSuffix(k, "/id") || strings.HasSuffix(k, "/index") || strings.HasSuffix(k, "-resource-id") {
					t.Errorf("%s/%s carries %s: a generated object must not take over the MiniCluster's kustomize identity", it.GetKind(), it.GetName(), k)
				}
			}
		}
		m := decodeItems(t, pl)
		info := readMiniCluster(t, []byte(mustYAML(t, fc)))
		checkKRMSet(t, m, info)
		if len(pl.items) != len(m.All) {
			t.Errorf("%d items out, want the %d generated objects", len(pl.items), len(m.All))
		}
	})

	// kpt with configPath: the package's MiniCluster file is the functionConfig and an item with a
	// path; unlike kustomize's copy it must stay in the package.
	t.Run("kpt-configpath", func(t *testing.T) {
		item := miniCluster("flux-sample", "minicluster.yaml", 2, "hostname")
		fc := cloneMap(t, item)
		res := run(t, resourceList(t, []map[string]any{item}, fc), "", fnBin)
		if res.code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
		}
		pl := parseResourceList(t, res.stdout)
		mcs := pl.find("MiniCluster", "")
		if len(mcs) != 1 {
			t.Fatalf("want the package's MiniCluster kept once, got %d", len(mcs))
		}
		if p := mcs[0].GetAnnotations()["internal.config.kubernetes.io/path"]; p != "minicluster.yaml" {
			t.Errorf("the MiniCluster item's path is %q, want minicluster.yaml", p)
		}
		checkKRMSet(t, decodeItems(t, pl), miniClusterInfo{Name: "flux-sample", Size: 2})
	})

	// kpt fn eval --fn-config: the MiniCluster only as functionConfig.
	t.Run("functionconfig-only", func(t *testing.T) {
		fc := helloWorld(t)
		res := run(t, resourceList(t, []map[string]any{}, fc), "", fnBin)
		if res.code != 0 {
			t.Fatalf("exit %d\nstderr:\n%s", res.code, res.stderr)
		}
		pl := parseResourceList(t, res.stdout)
		if n := len(pl.find("MiniCluster", "")); n != 0 {
			t.Errorf("the functionConfig MiniCluster became an item (%d)", n)
		}
		checkKRMSet(t, decodeItems(t, pl), readMiniCluster(t, []byte(mustYAML(t, fc))))
	})

	// kpt render: the whole package comes in, the output goes back to disk, and the next render
	// reads it again.
	t.Run("kpt-render", func(t *testing.T) {
		kptfile := map[string]any{
			"apiVersion": "kpt.dev/v1", "kind": "Kptfile",
			"metadata": map[string]any{"name": "hpc", "annotations": map[string]any{"internal.config.kubernetes.io/path": "Kptfile"}},
			"pipeline": map[string]any{"mutators": []any{map[string]any{"exec": "minicluster-fn"}}},
		}
		usersService := map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "users-own", "annotations": map[string]any{"internal.config.kubernetes.io/path": "service.yaml"}},
			"spec":     map[string]any{"ports": []any{map[string]any{"port": 80}}},
		}
		mc := miniCluster("flux-sample", "minicluster.yaml", 2, "hostname")
		in := resourceList(t, []map[string]any{kptfile, mc, usersService})
		first := run(t, in, "", fnBin)
		if first.code != 0 {
			t.Fatalf("first run: exit %d\nstderr:\n%s", first.code, first.stderr)
		}
		pl1 := parseResourceList(t, first.stdout)
		m1 := decodeItems(t, pl1)
		checkKRMSet(t, m1, miniClusterInfo{Name: "flux-sample", Size: 2})
		inPL := parseResourceList(t, in)
		for _, kind := range []string{"Kptfile", "Service"} {
			name := map[string]string{"Kptfile": "hpc", "Service": "users-own"}[kind]
			assertSameItem(t, inPL, pl1, kind, name)
		}
		for _, it := range pl1.items {
			if it.GetKind() == "MiniCluster" || it.GetName() == "hpc" || it.GetName() == "users-own" {
				continue
			}
			// Next to the MiniCluster's file, named as kyaml names an object without a path
			// (<kind>_<name>.yaml), and in no directory of its own that a rename would leave empty.
			p := it.GetAnnotations()["internal.config.kubernetes.io/path"]
			if want := strings.ToLower(it.GetKind()) + "_" + it.GetName() + ".yaml"; p != want {
				t.Errorf("%s/%s: path annotation %q, want %q for kpt to write", it.GetKind(), it.GetName(), p, want)
			}
		}

		// Idempotent: the output fed back in is the output.
		second := run(t, first.stdout, "", fnBin)
		if second.code != 0 {
			t.Fatalf("second run: exit %d\nstderr:\n%s", second.code, second.stderr)
		}
		if string(second.stdout) != string(first.stdout) {
			t.Errorf("rendering the output again changed it (not idempotent)\n%s", firstDiff(first.stdout, second.stdout))
		}

		// A changed MiniCluster replaces the earlier output instead of adding to it.
		oldJob := jobsWith(m1, componentBroker)
		oldEntry := configMapsWith(m1, componentEntry)
		if len(oldJob) != 1 || len(oldEntry) != 1 {
			t.Fatalf("first run: %d broker Jobs and %d entrypoint ConfigMaps, want 1 and 1", len(oldJob), len(oldEntry))
		}
		mcNodes := pl1.find("MiniCluster", "flux-sample")
		if len(mcNodes) != 1 {
			t.Fatalf("first run: %d MiniCluster items, want 1", len(mcNodes))
		}
		if err := mcNodes[0].PipeE(kyaml.Lookup("spec"), kyaml.SetField("size", kyaml.NewScalarRNode("3"))); err != nil {
			t.Fatal(err)
		}
		if err := mcNodes[0].PipeE(kyaml.Lookup("spec", "containers", "0"), kyaml.SetField("command", kyaml.NewStringRNode("hostname -f"))); err != nil {
			t.Fatal(err)
		}
		changed := []byte(pl1.node.MustString())
		if !strings.Contains(string(changed), "hostname -f") {
			t.Fatalf("editing the MiniCluster item failed:\n%s", changed)
		}
		third := run(t, changed, "", fnBin)
		if third.code != 0 {
			t.Fatalf("run on the changed MiniCluster: exit %d\nstderr:\n%s", third.code, third.stderr)
		}
		pl3 := parseResourceList(t, third.stdout)
		m3 := decodeItems(t, pl3)
		checkKRMSet(t, m3, miniClusterInfo{Name: "flux-sample", Size: 3})
		if len(pl3.find("Job", oldJob[0].Name)) != 0 {
			t.Errorf("the old broker Job %s is still there after the MiniCluster changed", oldJob[0].Name)
		}
		if len(pl3.find("ConfigMap", oldEntry[0].Name)) != 0 {
			t.Errorf("the old entrypoint ConfigMap %s is still there after the MiniCluster changed", oldEntry[0].Name)
		}
		if c1, c3 := m1.kindCounts(), m3.kindCounts(); !maps.Equal(c1, c3) {
			t.Errorf("object counts changed from %v to %v: leftovers or losses", c1, c3)
		}
		if len(pl3.items) != len(pl1.items) {
			t.Errorf("%d items after the change, %d before", len(pl3.items), len(pl1.items))
		}
		if n := len(pl3.find("MiniCluster", "")); n != 1 {
			t.Errorf("%d MiniCluster items, want 1", n)
		}
		for _, kind := range []string{"Kptfile", "Service"} {
			name := map[string]string{"Kptfile": "hpc", "Service": "users-own"}[kind]
			assertSameItem(t, pl1, pl3, kind, name)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		mc := miniCluster("flux-sample", "minicluster.yaml", -1, "hostname")
		spec := mc["spec"].(map[string]any)
		spec["containers"].([]any)[0].(map[string]any)["imagee"] = "typo"
		spec["containers"].([]any)[0].(map[string]any)["image"] = "Ubuntu:Noble"
		usersService := map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "users-own", "annotations": map[string]any{"internal.config.kubernetes.io/path": "service.yaml"}},
		}
		in := resourceList(t, []map[string]any{mc, usersService})
		res := run(t, in, "", fnBin)
		if res.code == 0 {
			t.Fatalf("exit 0 on an invalid MiniCluster\nstdout:\n%s", res.stdout)
		}
		pl := parseResourceList(t, res.stdout)
		if got, want := pl.itemStrings(t), parseResourceList(t, in).itemStrings(t); !slices.Equal(got, want) {
			t.Errorf("items changed on error: want exactly the input items\ngot:\n%s\nwant:\n%s", strings.Join(got, "---\n"), strings.Join(want, "---\n"))
		}
		errs := 0
		for _, r := range pl.results {
			if r.Severity != "error" {
				continue
			}
			errs++
			if r.ResourceRef == nil || r.ResourceRef.Kind != "MiniCluster" || r.ResourceRef.Name != "flux-sample" {
				t.Errorf("error result without resourceRef MiniCluster/flux-sample: %+v", r)
			}
			if r.Field == nil || r.Field.Path == "" {
				t.Errorf("error result without field.path: %+v", r)
			}
			if r.File == nil || r.File.Path != "minicluster.yaml" {
				t.Errorf("error result without file.path minicluster.yaml: %+v", r)
			}
		}
		if errs < 3 {
			t.Errorf("%d error results, want one per problem (negative size, unknown field imagee, image not a reference): %+v", errs, pl.results)
		}
		paths := ""
		for _, r := range pl.results {
			if r.Field != nil {
				paths += r.Field.Path + " "
			}
		}
		for _, want := range []string{"spec.size", "imagee", "spec.containers[0].image"} {
			if !strings.Contains(paths, want) {
				t.Errorf("no result with a field path naming %s (paths: %s)", want, paths)
			}
		}
		if !strings.Contains(string(res.stderr), "error: ") {
			t.Errorf("stderr shows no error line:\n%s", res.stderr)
		}
	})

	t.Run("duplicate-names", func(t *testing.T) {
		a := miniCluster("flux-sample", "team-a/minicluster.yaml", 2, "hostname")
		b := miniCluster("flux-sample", "team-b/minicluster.yaml", 2, "hostname")
		res := run(t, resourceList(t, []map[string]any{a, b}), "", fnBin)
		if res.code == 0 {
			t.Fatalf("exit 0 with two MiniClusters called flux-sample")
		}
		pl := parseResourceList(t, res.stdout)
		found := false
		for _, r := range pl.results {
			if r.Severity == "error" && strings.Contains(r.Message, "team-a/minicluster.yaml") && strings.Contains(r.Message, "team-b/minicluster.yaml") {
				found = true
			}
		}
		if !found {
			t.Errorf("no error result naming both files: %+v", pl.results)
		}
		for _, f := range []string{"team-a/minicluster.yaml", "team-b/minicluster.yaml"} {
			if !strings.Contains(string(res.stderr), f) {
				t.Errorf("stderr does not name %s:\n%s", f, res.stderr)
			}
		}
		if n := len(pl.items); n != 2 {
			t.Errorf("%d items out, want the 2 input items only", n)
		}
	})
}

// checkKRMSet checks the generated objects of one MiniCluster among KRM items (where path
// annotations are expected, so the annotation check of checkManifestSet does not apply).
func checkKRMSet(t testing.TB, m *manifests, mc miniClusterInfo) {
	t.Helper()
	stripped := *m
	stripped.All = nil
	for _, o := range m.All {
		if o.GetLabels()[labelManagedBy] != "minicluster-fn" {
			continue
		}
		if o.GetLabels()[labelMiniCluster] != mc.Name {
			t.Errorf("%s: "+labelMiniCluster+" label %q, want %q", o, o.GetLabels()[labelMiniCluster], mc.Name)
		}
		ann := map[string]string{}
		for k, v := range o.GetAnnotations() {
			if !strings.HasPrefix(k, "internal.config.kubernetes.io/") && !strings.HasPrefix(k, "config.kubernetes.io/") {
				ann[k] = v
			}
		}
		o.SetAnnotations(ann)
		stripped.All = append(stripped.All, o)
	}
	if job, _ := checkManifestSet(t, &stripped, mc); job != nil {
		if cm := entrypointConfigMap(t, &stripped, job); cm != nil {
			checkScripts(t, cm)
		}
	}
	if n := len(jobsWith(m, componentKeygen)); n != 1 {
		t.Errorf("%d keygen Jobs, want 1", n)
	}
}

func configMapsWith(m *manifests, component string) []*corev1.ConfigMap {
	var out []*corev1.ConfigMap
	for _, cm := range m.ConfigMaps {
		if cm.Labels[labelComponent] == component {
			out = append(out, cm)
		}
	}
	return out
}

func assertSameItem(t testing.TB, before, after *parsedList, kind, name string) {
	t.Helper()
	b, a := before.find(kind, name), after.find(kind, name)
	if len(b) != 1 || len(a) != 1 {
		t.Errorf("%s/%s: %d items before, %d after, want 1 and 1", kind, name, len(b), len(a))
		return
	}
	if bs, as := b[0].MustString(), a[0].MustString(); bs != as {
		t.Errorf("%s/%s changed:\nbefore:\n%s\nafter:\n%s", kind, name, bs, as)
	}
}

func mustYAML(t testing.TB, obj any) string {
	t.Helper()
	b, err := sigsyaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
