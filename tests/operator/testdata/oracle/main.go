// Command operator-oracle runs the Flux Framework operator's own MiniCluster reconciler on one
// MiniCluster file and prints every object it created, as a YAML stream.
//
// It is built only in a scratch copy of the operator's source (see ../oracle.go): the operator's
// module is not served by the module proxy, so go.mod here replaces it with ./flux-operator, the
// unpacked tarball. The CRD's structural schema is applied first, with the API server's own
// pruning and defaulting code, because the reconciler only ever sees objects the API server
// stored. The operator's keygen is its stub (empty curve.cert); certificates compare by shape.
//
// Usage: operator-oracle -crd CRD.yaml [-namespace NS] MINICLUSTER.yaml
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"

	api "github.com/flux-framework/flux-operator/api/v1alpha2"
	controllers "github.com/flux-framework/flux-operator/controllers/flux"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"
)

// maxReconciles bounds the retries after errors; a MiniCluster needs one more round than it has
// sidecar containers with ports.
const maxReconciles = 20

func main() {
	crdPath := flag.String("crd", "", "the MiniCluster CRD (config/crd/bases)")
	namespace := flag.String("namespace", "default", "namespace of a MiniCluster that sets none")
	flag.Parse()
	if *crdPath == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: operator-oracle -crd CRD.yaml [-namespace NS] MINICLUSTER.yaml")
		os.Exit(2)
	}
	// The operator prints its progress with fmt.Print* to standard output: the objects go to the
	// real standard output, everything else to standard error.
	out := os.Stdout
	os.Stdout = os.Stderr
	if err := run(out, *crdPath, *namespace, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "operator-oracle:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, crdPath, namespace, input string) error {
	schema, err := structuralSchema(crdPath)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(input)
	if err != nil {
		return err
	}
	var obj map[string]interface{}
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	// What the API server does to a custom resource before storing it: drop nulls the schema does
	// not allow, apply defaults, prune unknown fields (reported, as kubectl warns about them).
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, schema)
	structuraldefaulting.Default(obj, schema)
	pruned := structuralpruning.PruneWithOptions(obj, schema, true, structuralpruning.PruneOptions{ReturnPruned: true})
	sort.Strings(pruned)
	for _, p := range pruned {
		fmt.Fprintf(os.Stderr, "pruned: %s\n", p)
	}
	stored, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var cluster api.MiniCluster
	if err := json.Unmarshal(stored, &cluster); err != nil {
		return fmt.Errorf("%s: %w", input, err)
	}
	if cluster.Namespace == "" {
		cluster.Namespace = namespace
	}
	cluster.UID = types.UID("oracle-uid")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := api.AddToScheme(scheme); err != nil {
		return err
	}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(&cluster).Build()

	// addBrokerLabel lists pods through a clientset of its own (not the controller-runtime
	// client); a fake API endpoint answers with an empty pod list, as a fresh namespace would.
	pods := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/pods") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`)
			return
		}
		http.Error(w, "operator-oracle: unexpected request "+r.Method+" "+r.URL.Path, http.StatusNotImplemented)
	}))
	defer pods.Close()

	reconciler := controllers.NewMiniClusterReconciler(cl, scheme, rest.Config{Host: pods.URL}, nil)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: cluster.Namespace, Name: cluster.Name}}
	// The manager calls Reconcile again after an error. The operator relies on that: creating a
	// sidecar's Service returns the NotFound of its lookup, so each such Service costs one round.
	var rounds []string
	for len(rounds) < maxReconciles {
		_, err := reconciler.Reconcile(context.Background(), req)
		if err == nil {
			break
		}
		rounds = append(rounds, err.Error())
	}
	if len(rounds) == maxReconciles {
		return fmt.Errorf("reconcile failed %d times: %s", maxReconciles, strings.Join(rounds, "; "))
	}
	for _, r := range rounds {
		fmt.Fprintf(os.Stderr, "reconcile error (retried): %s\n", r)
	}
	return printObjects(out, cl, scheme, cluster.Namespace)
}

// structuralSchema reads the CRD and returns the structural schema of its only version, as the
// API server builds it.
func structuralSchema(crdPath string) (*structuralschema.Structural, error) {
	raw, err := os.ReadFile(crdPath)
	if err != nil {
		return nil, err
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(raw, &crd); err != nil {
		return nil, fmt.Errorf("%s: %w", crdPath, err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		return nil, fmt.Errorf("%s: expected one version with a schema", crdPath)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(&internal)
}

// printObjects prints every object in the namespace, the MiniCluster last (with the status the
// reconciler wrote), sorted by kind and name.
func printObjects(out io.Writer, cl client.Client, scheme *runtime.Scheme, namespace string) error {
	lists := []client.ObjectList{
		&corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceList{}, &corev1.PodList{},
		&batchv1.JobList{}, &networkingv1.IngressList{}, &api.MiniClusterList{},
	}
	var docs []string
	for _, list := range lists {
		if err := cl.List(context.Background(), list, client.InNamespace(namespace)); err != nil {
			return err
		}
		items, err := itemsOf(list, scheme)
		if err != nil {
			return err
		}
		docs = append(docs, items...)
	}
	_, err := fmt.Fprint(out, strings.Join(docs, "---\n"))
	return err
}

// itemsOf returns the objects of a list as YAML documents sorted by name, each with its kind set and
// no resourceVersion, so that two runs print the same.
func itemsOf(list client.ObjectList, scheme *runtime.Scheme) ([]string, error) {
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(items))
	for _, item := range items {
		o, ok := item.(client.Object)
		if !ok {
			return nil, fmt.Errorf("%T in %T has no object metadata", item, list)
		}
		objs = append(objs, o)
	}
	sort.Slice(objs, func(i, j int) bool { return objs[i].GetName() < objs[j].GetName() })
	var docs []string
	for _, o := range objs {
		gvks, _, err := scheme.ObjectKinds(o)
		if err != nil {
			return nil, err
		}
		o.GetObjectKind().SetGroupVersionKind(gvks[0])
		o.SetResourceVersion("")
		out, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		docs = append(docs, string(out))
	}
	return docs, nil
}
