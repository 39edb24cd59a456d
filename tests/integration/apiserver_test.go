package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/utils/ptr"
)

// cluster is one API server shared by every subtest of TestAPIServer.
type cluster struct {
	config *rest.Config
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// warnings collects the warning headers the server sends to the admin clients.
	warnings *warningCollector
	// servingCert is the PEM file of the server's certificate for 127.0.0.1 and its CA.
	servingCert string
}

// TestAPIServer starts one kube-apiserver configured like a typical cluster (RBAC authorization,
// the default admission plugins including PodSecurity and ServiceAccount, privileged containers
// allowed) and runs every check against it as a subtest. The
// server belongs to this test rather than to TestMain because the etcd and apiserver test
// helpers need a testing.TB, which only a test has.
func TestAPIServer(t *testing.T) {
	fnBinary(t)
	start := time.Now()
	etcd := testserver.RunEtcd(t, nil)
	storage := storagebackend.NewDefaultConfig("/minicluster-fn-integration/registry", nil)
	storage.Transport.ServerList = etcd.Endpoints()
	srv := kubeapiservertesting.StartTestServerOrDie(t, nil, []string{"--authorization-mode=RBAC", "--allow-privileged=true"}, storage)
	t.Cleanup(srv.TearDownFn)
	t.Logf("kube-apiserver ready in %s (log: %s)", time.Since(start).Round(time.Millisecond), apiserverLog)

	serving := srv.ServerOpts.SecureServing.ServerCert
	c := &cluster{
		config:      rest.CopyConfig(srv.ClientConfig),
		warnings:    &warningCollector{},
		servingCert: filepath.Join(serving.CertDirectory, serving.PairName+".crt"),
	}
	c.config.WarningHandler = c.warnings
	c.cs = kubernetes.NewForConfigOrDie(c.config)
	c.dyn = dynamic.NewForConfigOrDie(c.config)
	c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.cs.Discovery()))

	t.Run("apply", c.testApplyAll)
	t.Run("job names", c.testJobNames)
	t.Run("size limit", c.testSizeLimit)
	t.Run("keygen publish", c.testKeygenPublish)
	t.Run("keygen configmap", c.testKeygenConfigMap)
	t.Run("keygen script", c.testKeygenScript)
	t.Run("keygen script failures", c.testKeygenScriptFailures)
	t.Run("keygen bad input", c.testKeygenBadInput)
	t.Run("keygen image", c.testKeygenImage)
	t.Run("pod security", c.testPodSecurity)
	t.Run("overlays", c.testOverlays)
	t.Run("status with the view role", c.testStatusView)
	t.Run("check", c.testCheck)
}

// warningCollector records warning headers (deprecations, unknown fields under non-strict
// validation, Pod Security warnings).
type warningCollector struct {
	mu   sync.Mutex
	list []string
}

func (w *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// take returns the warnings since the last call and forgets them.
func (w *warningCollector) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.list
	w.list = nil
	return l
}

// namespace creates a fresh namespace with the given labels and the "default" ServiceAccount that
// the (absent) controller manager would create; pods without a serviceAccountName need it.
func (c *cluster) namespace(t *testing.T, prefix string, labels map[string]string) string {
	t.Helper()
	ctx := context.Background()
	ns, err := c.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.cs.CoreV1().ServiceAccounts(ns.Name).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// decodeStream splits a rendered YAML stream into objects.
func decodeStream(t testing.TB, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decoding the rendered stream: %v", err)
		}
		if m != nil {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// render runs `minicluster-fn render` on a file and returns its objects.
func render(t *testing.T, file string) []*unstructured.Unstructured {
	t.Helper()
	out, err := runRender(t, file)
	if err != nil {
		t.Fatal(err)
	}
	return decodeStream(t, out)
}

// renderText writes a MiniCluster to a temporary file and renders it.
func renderText(t *testing.T, miniCluster string) []*unstructured.Unstructured {
	t.Helper()
	f := filepath.Join(t.TempDir(), "minicluster.yaml")
	if err := os.WriteFile(f, []byte(miniCluster), 0o644); err != nil {
		t.Fatal(err)
	}
	return render(t, f)
}

// ref names an object in messages.
func ref(o *unstructured.Unstructured) string { return o.GetKind() + "/" + o.GetName() }

// apply server-side applies every object into ns with strict field validation, as one field
// manager (as a GitOps tool would), and returns the objects the server returned, in order.
func (c *cluster) apply(t *testing.T, ns string, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		o = o.DeepCopy()
		// The rendered namespace (a corpus MiniCluster may have one) is replaced by the test's.
		o.SetNamespace(ns)
		gvk := o.GroupVersionKind()
		mapping, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s: %v", ref(o), err)
		}
		body, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.dyn.Resource(mapping.Resource).Namespace(ns).Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
			FieldManager:    "integration-test",
			Force:           ptr.To(true),
			FieldValidation: metav1.FieldValidationStrict,
		})
		if err != nil {
			t.Fatalf("server-side apply of %s: %v", ref(o), err)
		}
		out = append(out, got)
	}
	return out
}

// find returns the single object of kind with the component label, failing otherwise.
func find(t testing.TB, objs []*unstructured.Unstructured, kind, component string) *unstructured.Unstructured {
	t.Helper()
	var found []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind && o.GetLabels()["minicluster-fn.dev/component"] == component {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want 1 %s with component %s, found %d", kind, component, len(found))
	}
	return found[0]
}

// kubeconfigFor writes a kubeconfig for this server with a bearer token and a default namespace.
func (c *cluster) kubeconfigFor(t testing.TB, token, namespace string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["it"] = &clientcmdapi.Cluster{
		Server:                   c.config.Host,
		CertificateAuthorityData: c.config.CAData,
		// The loopback serving certificate is for this name, not for 127.0.0.1.
		TLSServerName: c.config.ServerName,
	}
	cfg.AuthInfos["it"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["it"] = &clientcmdapi.Context{Cluster: "it", AuthInfo: "it", Namespace: namespace}
	cfg.CurrentContext = "it"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// gvr is the resource of a core or batch kind, for direct dynamic calls.
func gvr(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}

// fnResult is what a minicluster-fn process left behind.
type fnResult struct {
	stdout, stderr string
	code           int
}

func (r fnResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// runFn runs the binary with exactly env as its environment.
func runFn(t testing.TB, env []string, stdin string, args ...string) fnResult {
	t.Helper()
	cmd := exec.Command(fnBinary(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running minicluster-fn %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return fnResult{out.String(), errOut.String(), code}
}
