package fluxcd

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/kustomize"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/minicluster-fn/minicluster-fn/internal/objyaml"
)

// durationPattern is the kubebuilder validation pattern of every Flux CD interval and timeout
// (kustomization_types.go, gitrepository_types.go, ocirepository_types.go).
var durationPattern = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`)

func testOptions(kind string) Options {
	o := Options{
		Name: "miniclusters", Namespace: "flux-system", TargetNamespace: "hpc-team",
		SourceKind: kind, Path: "./deploy", SecretRef: "git-credentials",
		SourceInterval: 5 * time.Minute, Interval: 10 * time.Minute, RetryInterval: 2 * time.Minute, Timeout: 15 * time.Minute,
		BrokerHealthChecks: true,
	}
	if kind == OCIRepositoryKind {
		o.URL, o.Tag, o.Path = "oci://ghcr.io/org/hpc-manifests", "latest", "./"
	} else {
		o.URL, o.Branch = "https://github.com/org/hpc", "main"
	}
	return o
}

// emit writes the objects as the command does and decodes them strictly (unknown fields are
// errors) into the real Flux CD API types: the source, then the Kustomizations.
func emit(t *testing.T, clusters []MiniCluster, o Options) ([]*kustomizev1.Kustomization, any) {
	t.Helper()
	source, kss, _, err := Objects(clusters, o)
	if err != nil {
		t.Fatal(err)
	}
	objs := []runtime.Object{source}
	for _, ks := range kss {
		objs = append(objs, ks)
	}
	var out bytes.Buffer
	if err := objyaml.WriteStream(&out, objs...); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != len(objs) {
		t.Fatalf("want %d documents, got %d:\n%s", len(objs), len(docs), out.String())
	}
	var decodedSource any
	switch o.SourceKind {
	case GitRepositoryKind:
		git := &sourcev1.GitRepository{}
		if err := sigsyaml.UnmarshalStrict([]byte(docs[0]), git); err != nil {
			t.Fatalf("GitRepository does not decode strictly into source-controller/api/v1: %v\n%s", err, docs[0])
		}
		if git.APIVersion != sourcev1.GroupVersion.String() || git.Kind != sourcev1.GitRepositoryKind ||
			git.Spec.URL != o.URL || git.Spec.Reference.Branch != o.Branch || git.Spec.SecretRef.Name != o.SecretRef {
			t.Errorf("GitRepository: %+v", git)
		}
		checkDuration(t, "GitRepository spec.interval", git.Spec.Interval.Duration, o.SourceInterval)
		decodedSource = git
	case OCIRepositoryKind:
		oci := &sourcev1.OCIRepository{}
		if err := sigsyaml.UnmarshalStrict([]byte(docs[0]), oci); err != nil {
			t.Fatalf("OCIRepository does not decode strictly into source-controller/api/v1: %v\n%s", err, docs[0])
		}
		if oci.APIVersion != sourcev1.GroupVersion.String() || oci.Kind != sourcev1.OCIRepositoryKind ||
			oci.Spec.URL != o.URL || oci.Spec.Reference.Tag != o.Tag || oci.Spec.Insecure != o.Insecure {
			t.Errorf("OCIRepository: %+v", oci)
		}
		checkDuration(t, "OCIRepository spec.interval", oci.Spec.Interval.Duration, o.SourceInterval)
		decodedSource = oci
	}
	var decoded []*kustomizev1.Kustomization
	for _, doc := range docs[1:] {
		k := &kustomizev1.Kustomization{}
		if err := sigsyaml.UnmarshalStrict([]byte(doc), k); err != nil {
			t.Fatalf("Kustomization does not decode strictly into kustomize-controller/api/v1: %v\n%s", err, doc)
		}
		if k.APIVersion != kustomizev1.GroupVersion.String() || k.Kind != kustomizev1.KustomizationKind {
			t.Errorf("Kustomization type: %s %s", k.APIVersion, k.Kind)
		}
		if !k.Spec.Prune || k.Spec.Force || k.Spec.TargetNamespace != o.TargetNamespace ||
			k.Spec.SourceRef.Kind != o.SourceKind || k.Spec.SourceRef.Name != o.Name || !strings.HasPrefix(k.Spec.Path, o.Path) {
			t.Errorf("Kustomization %s spec: %+v", k.Name, k.Spec)
		}
		checkDuration(t, "spec.interval", k.Spec.Interval.Duration, o.Interval)
		checkDuration(t, "spec.retryInterval", k.Spec.RetryInterval.Duration, o.RetryInterval)
		checkDuration(t, "spec.timeout", k.GetTimeout(), o.Timeout)
		decoded = append(decoded, k)
	}
	return decoded, decodedSource
}

func checkDuration(t *testing.T, field string, got, want time.Duration) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %s, want %s", field, got, want)
	}
	if s := got.String(); !durationPattern.MatchString(s) {
		t.Errorf("%s %q does not match the Flux CD API pattern %s", field, s, durationPattern)
	}
}

// build runs what kustomize-controller runs for a Kustomization (internal/controller
// kustomization_controller.go, v1.9.4: generate then build): the kustomization.yaml generator,
// which applies spec.targetNamespace and writes a kustomization.yaml when there is none, then
// SecureBuild with plugins disabled.
func build(t *testing.T, root string, k *kustomizev1.Kustomization) []*unstructured.Unstructured {
	t.Helper()
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(k)
	if err != nil {
		t.Fatal(err)
	}
	dirPath := filepath.Join(root, k.Spec.Path)
	if _, err := kustomize.NewGenerator(root, unstructured.Unstructured{Object: obj}).WriteFile(dirPath); err != nil {
		t.Fatalf("kustomization generator: %v", err)
	}
	rm, err := kustomize.SecureBuild(root, dirPath, false)
	if err != nil {
		t.Fatalf("kustomize build failed: %v", err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range rm.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

// TestKustomizeControllerBuild renders the examples as examples/fluxcd/render.sh does (a directory
// per MiniCluster, each with a kustomization.yaml), and also all into one directory (with and
// without a kustomization.yaml), writes the Flux CD objects for them, decodes them into the real
// API types and builds each Kustomization's path the way kustomize-controller does. Every object
// must land in the target namespace and be applied by exactly one Kustomization. No health check
// may name an object whose name an edit changes (the hash-named Jobs): a directory whose
// MiniClusters all end waits for every object instead (wait: true), and the other health checks
// name objects of the build, or the certificate Secrets the keygen Jobs create in the cluster.
func TestKustomizeControllerBuild(t *testing.T) {
	examples := exampleFiles(t)
	for _, tc := range []struct {
		name                       string
		directories, kustomization bool
		kind                       string
	}{
		{"git, a directory per MiniCluster", true, true, GitRepositoryKind},
		{"git, one directory with kustomization.yaml", false, true, GitRepositoryKind},
		{"git, one directory without kustomization.yaml", false, false, GitRepositoryKind},
		{"oci artifact, a directory per MiniCluster", true, true, OCIRepositoryKind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			o := testOptions(tc.kind)
			deploy := filepath.Join(root, o.Path)
			var names []string
			rendered := 0
			for name, file := range examples {
				data := renderFile(t, file)
				rendered += bytes.Count(data, []byte("\n---\n")) + 1
				dir := deploy
				if tc.directories {
					dir = filepath.Join(deploy, name)
					writeFile(t, dir, "kustomization.yaml", []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- "+name+".yaml\n"))
				}
				writeFile(t, dir, name+".yaml", data)
				names = append(names, name+".yaml")
			}
			if tc.kustomization && !tc.directories {
				slices.Sort(names)
				writeFile(t, deploy, "kustomization.yaml", []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- "+strings.Join(names, "\n- ")+"\n"))
			}
			clusters, err := ReadRendered(deploy)
			if err != nil {
				t.Fatal(err)
			}
			kss, _ := emit(t, clusters, o)
			if want := 1; tc.directories {
				want = len(examples)
				if len(kss) != want {
					t.Fatalf("%d Kustomizations for %d directories", len(kss), want)
				}
			} else if len(kss) != want {
				t.Fatalf("%d Kustomizations for one directory", len(kss))
			}
			built := map[string]string{} // object -> the Kustomization that applies it
			for _, k := range kss {
				for _, u := range build(t, root, k) {
					if u.GetNamespace() != o.TargetNamespace {
						t.Errorf("%s/%s is in namespace %q, want the target namespace %q", u.GetKind(), u.GetName(), u.GetNamespace(), o.TargetNamespace)
					}
					id := ref(u.GetAPIVersion(), u.GetKind(), u.GetName(), u.GetNamespace())
					if other, ok := built[id]; ok {
						t.Errorf("%s is applied by Kustomizations %s and %s", id, other, k.Name)
					}
					built[id] = k.Name
				}
			}
			if len(built) != rendered {
				t.Errorf("the builds have %d objects, the rendered files %d", len(built), rendered)
			}
			for _, k := range kss {
				for _, hc := range k.Spec.HealthChecks {
					if hc.Kind == "Job" {
						t.Errorf("Kustomization %s health-checks Job %s by its name, which an edit changes", k.Name, hc.Name)
					}
					if built[ref(hc.APIVersion, hc.Kind, hc.Name, hc.Namespace)] == k.Name {
						continue
					}
					if hc.Kind == "Secret" && built[ref("v1", "Service", hc.Name, hc.Namespace)] == k.Name {
						continue // the certificate, named after its owner Service: created by the keygen Job
					}
					t.Errorf("Kustomization %s: health check %+v names no object of its build", k.Name, hc)
				}
			}
			checkWait(t, clusters, kss, o)
		})
	}
}

func ref(apiVersion, kind, name, namespace string) string {
	return apiVersion + " " + kind + " " + namespace + "/" + name
}

// checkWait: a Kustomization waits for every object (so for the keygen and broker Jobs to
// complete) exactly when all of its MiniClusters end; otherwise it checks each MiniCluster's
// certificate and Service.
func checkWait(t *testing.T, clusters []MiniCluster, kss []*kustomizev1.Kustomization, o Options) {
	t.Helper()
	ending := 0
	for _, mc := range clusters {
		if mc.Persistent == "" {
			ending++
		}
		var k *kustomizev1.Kustomization
		for _, candidate := range kss {
			if candidate.Name == KustomizationName(o.Name, mc.Dir) {
				k = candidate
			}
		}
		if k == nil {
			t.Fatalf("MiniCluster %s in %s: no Kustomization", mc.Name, mc.Dir)
		}
		allEnd := true
		for _, other := range clusters {
			if other.Dir == mc.Dir && other.Persistent != "" {
				allEnd = false
			}
		}
		if k.Spec.Wait != allEnd {
			t.Errorf("MiniCluster %s (persistent: %q): Kustomization %s has wait %v", mc.Name, mc.Persistent, k.Name, k.Spec.Wait)
		}
		if k.Spec.Wait {
			if len(k.Spec.HealthChecks) > 0 {
				t.Errorf("Kustomization %s waits and also lists health checks, which kustomize-controller ignores then", k.Name)
			}
			continue
		}
		checked := map[string]bool{}
		for _, hc := range k.Spec.HealthChecks {
			checked[hc.Kind+"/"+hc.Name] = true
		}
		if !checked[mc.CurveKind+"/"+mc.Curve] || !checked["Service/"+mc.Service] {
			t.Errorf("MiniCluster %s: Kustomization %s checks %v, without its certificate %s/%s or Service %s", mc.Name, k.Name, k.Spec.HealthChecks, mc.CurveKind, mc.Curve, mc.Service)
		}
	}
	if ending == 0 || ending == len(clusters) {
		t.Errorf("%d of %d MiniClusters end: the examples must have both kinds", ending, len(clusters))
	}
}

// TestKustomizeControllerRunsNoGenerators pins what the README says about the common mistake:
// a kustomization that runs minicluster-fn as a generator fails to build in kustomize-controller.
func TestKustomizeControllerRunsNoGenerators(t *testing.T) {
	root := t.TempDir()
	source, err := os.ReadFile(exampleFiles(t)["hello-world"])
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "minicluster.yaml", source)
	writeFile(t, root, "kustomization.yaml", []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators:\n- minicluster.yaml\n"))
	_, err = kustomize.SecureBuild(root, root, false)
	if err == nil || !strings.Contains(err.Error(), "external plugins disabled") {
		t.Fatalf("SecureBuild: %v; want the external plugins error", err)
	}
	t.Logf("kustomize-controller's build says: %v", err)
	if _, err := ReadRendered(root); err == nil || !strings.Contains(err.Error(), "external plugins disabled") {
		t.Errorf("ReadRendered: %v; want an error explaining the failure", err)
	}
}

func TestObjectsBrokerHealthChecksOff(t *testing.T) {
	clusters := []MiniCluster{
		{Name: "a", Dir: ".", BrokerJob: "a-1", KeygenJob: "a-keygen-1", CurveKind: "ConfigMap", Curve: "a-curve", Service: "a"},
		{Name: "b", Dir: ".", BrokerJob: "b-1", CurveKind: "Secret", Curve: "b-cert", Service: "b", Persistent: "no command"},
	}
	o := testOptions(GitRepositoryKind)
	o.BrokerHealthChecks = false
	_, kss, notes, err := Objects(clusters, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes %v: with broker health checks off there is nothing to explain", notes)
	}
	var got []string
	for _, hc := range kss[0].Spec.HealthChecks {
		got = append(got, hc.Kind+"/"+hc.Name)
	}
	want := []string{"ConfigMap/a-curve", "Service/a", "Secret/b-cert", "Service/b"}
	if !slices.Equal(got, want) || kss[0].Spec.Wait {
		t.Errorf("health checks %v (wait %v), want %v and no wait", got, kss[0].Spec.Wait, want)
	}
	o.BrokerHealthChecks = true
	_, _, notes, err = Objects(clusters, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "a-1") || !strings.Contains(notes[0], "also holds b") ||
		!strings.Contains(notes[1], "b-1") || !strings.Contains(notes[1], "no command") {
		t.Errorf("notes %v: want one for each broker Job not checked, saying why", notes)
	}
}
