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
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/kustomize"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	sigsyaml "sigs.k8s.io/yaml"
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
// errors) into the real Flux CD API types.
func emit(t *testing.T, clusters []MiniCluster, o Options) (*kustomizev1.Kustomization, any) {
	t.Helper()
	source, ks, _ := Objects(clusters, o)
	var out bytes.Buffer
	if err := WriteYAML(&out, source, ks); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("want 2 documents, got %d:\n%s", len(docs), out.String())
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
			oci.Spec.URL != o.URL || oci.Spec.Reference.Tag != o.Tag {
			t.Errorf("OCIRepository: %+v", oci)
		}
		checkDuration(t, "OCIRepository spec.interval", oci.Spec.Interval.Duration, o.SourceInterval)
		decodedSource = oci
	}
	k := &kustomizev1.Kustomization{}
	if err := sigsyaml.UnmarshalStrict([]byte(docs[1]), k); err != nil {
		t.Fatalf("Kustomization does not decode strictly into kustomize-controller/api/v1: %v\n%s", err, docs[1])
	}
	if k.APIVersion != kustomizev1.GroupVersion.String() || k.Kind != kustomizev1.KustomizationKind {
		t.Errorf("Kustomization type: %s %s", k.APIVersion, k.Kind)
	}
	if !k.Spec.Prune || k.Spec.Wait || k.Spec.Force || k.Spec.TargetNamespace != o.TargetNamespace ||
		k.Spec.SourceRef.Kind != o.SourceKind || k.Spec.SourceRef.Name != o.Name || k.Spec.Path != o.Path {
		t.Errorf("Kustomization spec: %+v", k.Spec)
	}
	checkDuration(t, "spec.interval", k.Spec.Interval.Duration, o.Interval)
	checkDuration(t, "spec.retryInterval", k.Spec.RetryInterval.Duration, o.RetryInterval)
	checkDuration(t, "spec.timeout", k.GetTimeout(), o.Timeout)
	return k, decodedSource
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

// TestKustomizeControllerBuild renders the examples into a directory, as examples/fluxcd/render.sh
// does (with and without a kustomization.yaml), writes the Flux CD objects for it, decodes them
// into the real API types and builds the directory the way kustomize-controller does. Every
// object must land in the target namespace, and every health check must name an object of the
// build, except the certificate Secrets the keygen Jobs create in the cluster.
func TestKustomizeControllerBuild(t *testing.T) {
	examples := exampleFiles(t)
	for _, tc := range []struct {
		name          string
		kustomization bool
		kind          string
	}{
		{"git with kustomization.yaml", true, GitRepositoryKind},
		{"git without kustomization.yaml", false, GitRepositoryKind},
		{"oci artifact", true, OCIRepositoryKind},
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
				writeFile(t, deploy, name+".yaml", data)
				names = append(names, name+".yaml")
			}
			if tc.kustomization {
				slices.Sort(names)
				writeFile(t, deploy, "kustomization.yaml", []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- "+strings.Join(names, "\n- ")+"\n"))
			}
			clusters, err := ReadRendered(deploy)
			if err != nil {
				t.Fatal(err)
			}
			k, _ := emit(t, clusters, o)
			objs := build(t, root, k)
			if len(objs) != rendered {
				t.Errorf("the build has %d objects, the rendered files %d", len(objs), rendered)
			}
			built := map[string]bool{}
			for _, u := range objs {
				if u.GetNamespace() != o.TargetNamespace {
					t.Errorf("%s/%s is in namespace %q, want the target namespace %q", u.GetKind(), u.GetName(), u.GetNamespace(), o.TargetNamespace)
				}
				built[ref(u.GetAPIVersion(), u.GetKind(), u.GetName(), u.GetNamespace())] = true
			}
			for _, hc := range k.Spec.HealthChecks {
				if built[ref(hc.APIVersion, hc.Kind, hc.Name, hc.Namespace)] {
					continue
				}
				if hc.Kind == "Secret" && built[ref("v1", "Service", hc.Name, hc.Namespace)] {
					continue // the certificate, named after its owner Service: created by the keygen Job, which is health-checked too
				}
				t.Errorf("health check %+v names no object of the build", hc)
			}
			checkBrokerJobs(t, clusters, k.Spec.HealthChecks)
		})
	}
}

func ref(apiVersion, kind, name, namespace string) string {
	return apiVersion + " " + kind + " " + namespace + "/" + name
}

// checkBrokerJobs: the broker Job of a MiniCluster that ends is health-checked, the Job of a
// persistent one never is, and the keygen Job always is.
func checkBrokerJobs(t *testing.T, clusters []MiniCluster, checks []meta.NamespacedObjectKindReference) {
	t.Helper()
	checked := map[string]bool{}
	for _, hc := range checks {
		if hc.Kind == "Job" {
			checked[hc.Name] = true
		}
	}
	ending := 0
	for _, mc := range clusters {
		if mc.Persistent == "" {
			ending++
		}
		if checked[mc.BrokerJob] != (mc.Persistent == "") {
			t.Errorf("MiniCluster %s (persistent: %q): broker Job health-checked = %v", mc.Name, mc.Persistent, checked[mc.BrokerJob])
		}
		if !checked[mc.KeygenJob] {
			t.Errorf("MiniCluster %s: keygen Job %s is not health-checked", mc.Name, mc.KeygenJob)
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
		{Name: "a", BrokerJob: "a-1", KeygenJob: "a-keygen-1", CurveKind: "ConfigMap", Curve: "a-curve", Service: "a"},
		{Name: "b", BrokerJob: "b-1", CurveKind: "Secret", Curve: "b-cert", Service: "b", Persistent: "no command"},
	}
	o := testOptions(GitRepositoryKind)
	o.BrokerHealthChecks = false
	_, ks, notes := Objects(clusters, o)
	if len(notes) != 0 {
		t.Errorf("notes %v: with broker health checks off there is nothing to explain", notes)
	}
	var got []string
	for _, hc := range ks.Spec.HealthChecks {
		got = append(got, hc.Kind+"/"+hc.Name)
	}
	want := []string{"Job/a-keygen-1", "ConfigMap/a-curve", "Service/a", "Secret/b-cert", "Service/b"}
	if !slices.Equal(got, want) {
		t.Errorf("health checks %v, want %v", got, want)
	}
	o.BrokerHealthChecks = true
	if _, _, notes := Objects(clusters, o); len(notes) != 1 || !strings.Contains(notes[0], "b-1") || !strings.Contains(notes[0], "no command") {
		t.Errorf("notes %v: want one naming broker Job b-1 and why", notes)
	}
}
