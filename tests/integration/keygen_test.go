package integration

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// keygenSetup is a namespace holding the applied output of a MiniCluster (hello-world unless
// said otherwise), and what the keygen Job would run there.
type keygenSetup struct {
	ns   string
	objs []*unstructured.Unstructured
	// command is the keygen container's command: /bin/sh -c SCRIPT keygen by default, nothing with
	// the keygen-image option (the image's entrypoint is minicluster-fn).
	command []string
	args    []string // the keygen container's arguments, as kubelet passes them (expandArgs)
	account string   // the keygen ServiceAccount
	name    string   // --name: the certificate object
	service string   // --owner-service
	// job is the keygen Job as applied (nil when its kind was not): the certificate's second owner.
	job *unstructured.Unstructured
}

// newKeygenSetup renders hello-world and applies the objects whose kind is in kinds (all if none).
func (c *cluster) newKeygenSetup(t *testing.T, labels map[string]string, kinds ...string) *keygenSetup {
	t.Helper()
	return c.keygenSetupOf(t, renderHelloWorld(t, ""), labels, kinds...)
}

// renderHelloWorld renders examples/hello-world with the annotation (a YAML line "key: value")
// added, if one is given.
func renderHelloWorld(t *testing.T, annotation string) []*unstructured.Unstructured {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "hello-world", "minicluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if annotation == "" {
		return renderText(t, string(text))
	}
	mc := strings.Replace(string(text), "  annotations:\n", "  annotations:\n    "+annotation+"\n", 1)
	if mc == string(text) {
		t.Fatal("examples/hello-world/minicluster.yaml has no annotations to add the option to")
	}
	return renderText(t, mc)
}

// configMapHelloWorld is hello-world with the option that makes the certificate a ConfigMap.
func configMapHelloWorld(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	return renderHelloWorld(t, "minicluster-fn.dev/curve-kind: ConfigMap")
}

// projectKeygen is the keygen-image option: the keygen Job runs keygen publish of this binary
// (the image name only matters to kubelet).
const projectKeygen = "minicluster-fn.dev/keygen-image: registry.example/minicluster-fn:test"

// keygenSetupOf applies the rendered objs whose kind is in kinds (all if none) to a new namespace.
func (c *cluster) keygenSetupOf(t *testing.T, objs []*unstructured.Unstructured, labels map[string]string, kinds ...string) *keygenSetup {
	t.Helper()
	s := &keygenSetup{ns: c.namespace(t, "keygen", labels), objs: objs}
	var toApply []*unstructured.Unstructured
	for _, o := range objs {
		if len(kinds) == 0 || slices.Contains(kinds, o.GetKind()) {
			toApply = append(toApply, o)
		}
	}
	for _, o := range c.apply(t, s.ns, toApply) {
		if o.GetKind() == "Job" && o.GetLabels()["minicluster-fn.dev/component"] == "keygen" {
			s.job = o
		}
	}
	s.command, s.args, s.account = keygenContainer(t, find(t, objs, "Job", "keygen"), s.job)
	s.name, s.service = argValue(t, s.args, "--name"), argValue(t, s.args, "--owner-service")
	return s
}

// keygenContainer is what kubelet runs for a rendered keygen Job: its container's command and
// arguments (with $(VAR) expanded from the applied Job, see expandArgs), and its ServiceAccount.
func keygenContainer(t *testing.T, job, applied *unstructured.Unstructured) (command, args []string, account string) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("keygen Job has %d containers, want 1", len(containers))
	}
	container := containers[0].(map[string]any)
	command, _, _ = unstructured.NestedStringSlice(container, "command")
	args, _, _ = unstructured.NestedStringSlice(container, "args")
	env, _, _ := unstructured.NestedSlice(container, "env")
	account, _, _ = unstructured.NestedString(job.Object, "spec", "template", "spec", "serviceAccountName")
	return command, expandArgs(t, args, env, applied), account
}

// expandArgs does what kubelet does with the keygen container's arguments: each $(VAR) becomes
// the value of the container's environment variable VAR. The variables come from the pod's
// labels that the Job controller sets (its Job's name and UID); no controller runs here, so they
// are taken from the applied Job, and are empty when it was not applied (as on a cluster whose
// Job controller sets no such labels).
func expandArgs(t *testing.T, args []string, env []any, job *unstructured.Unstructured) []string {
	t.Helper()
	podLabels := map[string]string{}
	if job != nil {
		podLabels["batch.kubernetes.io/job-name"] = job.GetName()
		podLabels["batch.kubernetes.io/controller-uid"] = string(job.GetUID())
	}
	values := map[string]string{}
	for _, e := range env {
		name, _, _ := unstructured.NestedString(e.(map[string]any), "name")
		path, _, _ := unstructured.NestedString(e.(map[string]any), "valueFrom", "fieldRef", "fieldPath")
		label, ok := strings.CutPrefix(path, "metadata.labels['")
		if !ok || !strings.HasSuffix(label, "']") {
			t.Fatalf("keygen env %s: %q is not a pod label", name, path)
		}
		values[name] = podLabels[strings.TrimSuffix(label, "']")]
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		for name, v := range values {
			out[i] = strings.ReplaceAll(out[i], "$("+name+")", v)
		}
	}
	return out
}

// argValue is the value after flag in args.
func argValue(t *testing.T, args []string, flag string) string {
	t.Helper()
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	t.Fatalf("no %s in the keygen arguments %q", flag, args)
	return ""
}

// token is a real ServiceAccount token from the TokenRequest API, as kubelet mounts into pods.
func (c *cluster) token(t testing.TB, ns, account string) string {
	t.Helper()
	tr, err := c.cs.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), account, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, account, err)
	}
	return tr.Status.Token
}

// publish runs the keygen container's arguments (keygen publish: the keygen-image option) as a
// separate process whose only credentials are the kubeconfig.
func (s *keygenSetup) publish(t *testing.T, kubeconfig string, extra ...string) fnResult {
	t.Helper()
	if len(s.command) > 0 || len(s.args) < 2 || s.args[1] != "publish" {
		t.Fatalf("the keygen Job does not run keygen publish: command %q, arguments %q", s.command, s.args)
	}
	return runFn(t, []string{"KUBECONFIG=" + kubeconfig}, "", append(append([]string{}, s.args...), extra...)...)
}

// clientAs is a client with only the credentials of the kubeconfig.
func clientAs(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(restConfig)
}

func (c *cluster) getConfigMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := c.cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return cm
}

func (c *cluster) getSecret(t *testing.T, ns, name string) *corev1.Secret {
	t.Helper()
	s, err := c.cs.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkPublished: the certificate object is owned by the Service, immutable, labelled, and holds
// a valid certificate whose secret key keygen did not print.
func (c *cluster) checkPublished(t *testing.T, s *keygenSetup, meta metav1.ObjectMeta, immutable *bool, cert string, printed fnResult) {
	t.Helper()
	svc, err := c.cs.CoreV1().Services(s.ns).Get(context.Background(), s.service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refs := meta.OwnerReferences
	if len(refs) == 0 || refs[0].APIVersion != "v1" || refs[0].Kind != "Service" || refs[0].Name != svc.Name || refs[0].UID != svc.UID {
		t.Errorf("ownerReferences = %+v, want first the Service %s (uid %s)", refs, svc.Name, svc.UID)
	}
	// The keygen Job, when it exists, is the second owner: a Service deleted by hand does not take
	// the certificate with it.
	wantRefs := 1
	if s.job != nil {
		wantRefs = 2
		if len(refs) < 2 || refs[1].APIVersion != "batch/v1" || refs[1].Kind != "Job" || refs[1].Name != s.job.GetName() || refs[1].UID != s.job.GetUID() {
			t.Errorf("ownerReferences = %+v, want then the keygen Job %s (uid %s)", refs, s.job.GetName(), s.job.GetUID())
		}
	}
	if len(refs) != wantRefs {
		t.Errorf("%d ownerReferences, want %d: %+v", len(refs), wantRefs, refs)
	}
	if immutable == nil || !*immutable {
		t.Error("the certificate object is not immutable")
	}
	if meta.Labels["minicluster-fn.dev/minicluster"] != "flux-sample" || meta.Labels["minicluster-fn.dev/component"] != "curve" {
		t.Errorf("labels = %v", meta.Labels)
	}
	if check := runFn(t, nil, cert, "keygen", "check", "-"); check.code != 0 || !strings.Contains(check.stdout, `CURVE certificate "flux-sample"`) {
		t.Errorf("the published certificate does not pass keygen check: %s", check)
	}
	_, secret, ok := strings.Cut(cert, `secret-key = "`)
	if !ok || len(secret) < 40 {
		t.Fatalf("no secret key in the published certificate")
	}
	if strings.Contains(printed.stdout+printed.stderr, secret[:40]) {
		t.Error("keygen printed the secret key")
	}
}

// testKeygenPublish runs `keygen publish` (the keygen-image option) with a real token of the
// generated ServiceAccount, bound only to the generated Role: it creates the certificate Secret,
// and the token can do nothing else with Secrets, so it can never read a ServiceAccount token.
func (c *cluster) testKeygenPublish(t *testing.T) {
	ctx := context.Background()
	s := c.keygenSetupOf(t, renderHelloWorld(t, projectKeygen), nil)
	kubeconfig := c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns)

	first := s.publish(t, kubeconfig)
	if first.code != 0 || !strings.Contains(first.stdout, "created Secret "+s.ns+"/"+s.name) {
		t.Fatalf("first keygen publish: %s", first)
	}
	secret := c.getSecret(t, s.ns, s.name)
	if secret.Type != corev1.SecretTypeOpaque {
		t.Errorf("type %q, want Opaque", secret.Type)
	}
	cert := string(secret.Data["curve.cert"])
	c.checkPublished(t, s, secret.ObjectMeta, secret.Immutable, cert, first)

	second := s.publish(t, kubeconfig)
	if second.code != 0 || !strings.Contains(second.stdout, "exists; left unchanged and not read") {
		t.Fatalf("second keygen publish: %s", second)
	}
	if again := c.getSecret(t, s.ns, s.name); again.ResourceVersion != secret.ResourceVersion || string(again.Data["curve.cert"]) != cert {
		t.Errorf("the second run changed the Secret (resourceVersion %s -> %s)", secret.ResourceVersion, again.ResourceVersion)
	}

	// What creating Secrets allows: a ServiceAccount token Secret, here for the namespace's
	// default ServiceAccount (the token controller would fill in its token). The keygen token
	// may create it, but never read it back, nor any other Secret.
	as := clientAs(t, kubeconfig)
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "token-for-default", Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	if _, err := as.CoreV1().Secrets(s.ns).Create(ctx, token, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a ServiceAccount token Secret with the keygen token: %v (the Role lets it create Secrets)", err)
	}
	entrypoint := find(t, s.objs, "ConfigMap", "entrypoint").GetName()
	denied := map[string]error{}
	_, denied["get the token Secret it created"] = as.CoreV1().Secrets(s.ns).Get(ctx, token.Name, metav1.GetOptions{})
	_, denied["get the certificate Secret"] = as.CoreV1().Secrets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
	_, denied["list Secrets"] = as.CoreV1().Secrets(s.ns).List(ctx, metav1.ListOptions{})
	_, denied["watch Secrets"] = as.CoreV1().Secrets(s.ns).Watch(ctx, metav1.ListOptions{})
	_, denied["update the certificate"] = as.CoreV1().Secrets(s.ns).Update(ctx, secret, metav1.UpdateOptions{})
	_, denied["patch the token Secret"] = as.CoreV1().Secrets(s.ns).Patch(ctx, token.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"x":"y"}}}`), metav1.PatchOptions{})
	denied["delete the certificate"] = as.CoreV1().Secrets(s.ns).Delete(ctx, s.name, metav1.DeleteOptions{})
	_, denied["list Secrets in another namespace"] = as.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	_, denied["create a Secret in another namespace"] = as.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, denied["get a ConfigMap"] = as.CoreV1().ConfigMaps(s.ns).Get(ctx, entrypoint, metav1.GetOptions{})
	_, denied["create a ConfigMap"] = as.CoreV1().ConfigMaps(s.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, denied["list Pods"] = as.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	_, denied["create a token of the default ServiceAccount"] = as.CoreV1().ServiceAccounts(s.ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	for what, err := range denied {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s with the keygen token: err = %v, want Forbidden", what, err)
		}
	}
	// ... while what it needs is allowed.
	if _, err := as.CoreV1().Services(s.ns).Get(ctx, s.service, metav1.GetOptions{}); err != nil {
		t.Errorf("get the owner Service with the keygen token: %v", err)
	}
}

// testKeygenConfigMap: with the curve-kind ConfigMap option, keygen publishes a ConfigMap, as the
// operator does. Its Role may read that ConfigMap back, so an existing one is checked.
func (c *cluster) testKeygenConfigMap(t *testing.T) {
	ctx := context.Background()
	s := c.keygenSetupOf(t, renderHelloWorld(t, "minicluster-fn.dev/curve-kind: ConfigMap\n    "+projectKeygen), nil)
	kubeconfig := c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns)

	first := s.publish(t, kubeconfig)
	if first.code != 0 || !strings.Contains(first.stdout, "created ConfigMap "+s.ns+"/"+s.name) {
		t.Fatalf("first keygen publish: %s", first)
	}
	cm := c.getConfigMap(t, s.ns, s.name)
	cert := cm.Data["curve.cert"]
	c.checkPublished(t, s, cm.ObjectMeta, cm.Immutable, cert, first)

	second := s.publish(t, kubeconfig)
	if second.code != 0 || !strings.Contains(second.stdout, "exists and holds a valid certificate; left unchanged") {
		t.Fatalf("second keygen publish: %s", second)
	}
	if again := c.getConfigMap(t, s.ns, s.name); again.ResourceVersion != cm.ResourceVersion || again.Data["curve.cert"] != cert {
		t.Errorf("the second run changed the ConfigMap (resourceVersion %s -> %s)", cm.ResourceVersion, again.ResourceVersion)
	}

	as := clientAs(t, kubeconfig)
	entrypoint := find(t, s.objs, "ConfigMap", "entrypoint").GetName()
	denied := map[string]error{}
	_, denied["get another ConfigMap"] = as.CoreV1().ConfigMaps(s.ns).Get(ctx, entrypoint, metav1.GetOptions{})
	_, denied["list ConfigMaps"] = as.CoreV1().ConfigMaps(s.ns).List(ctx, metav1.ListOptions{})
	_, denied["update the certificate"] = as.CoreV1().ConfigMaps(s.ns).Update(ctx, cm, metav1.UpdateOptions{})
	denied["delete the certificate"] = as.CoreV1().ConfigMaps(s.ns).Delete(ctx, s.name, metav1.DeleteOptions{})
	_, denied["create a Secret"] = as.CoreV1().Secrets(s.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, denied["list Secrets"] = as.CoreV1().Secrets(s.ns).List(ctx, metav1.ListOptions{})
	_, denied["get a ConfigMap in another namespace"] = as.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	for what, err := range denied {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s with the keygen token: err = %v, want Forbidden", what, err)
		}
	}
	if _, err := as.CoreV1().ConfigMaps(s.ns).Get(ctx, s.name, metav1.GetOptions{}); err != nil {
		t.Errorf("get the certificate ConfigMap with the keygen token: %v", err)
	}
}

// testKeygenBadInput: every failure of keygen publish is a clear message and exit 1, and nothing
// is changed.
func (c *cluster) testKeygenBadInput(t *testing.T) {
	project := renderHelloWorld(t, projectKeygen)
	projectConfigMap := renderHelloWorld(t, "minicluster-fn.dev/curve-kind: ConfigMap\n    "+projectKeygen)
	t.Run("no credentials", func(t *testing.T) {
		s := c.keygenSetupOf(t, project, nil)
		res := runFn(t, []string{}, "", s.args...)
		if res.code != 1 || !strings.Contains(res.stderr, "error: no Kubernetes credentials: not running in a pod") {
			t.Errorf("%s", res)
		}
	})

	t.Run("missing Service", func(t *testing.T) {
		s := c.keygenSetupOf(t, project, nil, "ServiceAccount", "Role", "RoleBinding")
		res := s.publish(t, c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns))
		want := "error: owner Service " + s.ns + "/" + s.service + " not found"
		if res.code != 1 || !strings.Contains(res.stderr, want) {
			t.Errorf("want %q: %s", want, res)
		}
		if _, err := c.cs.CoreV1().Secrets(s.ns).Get(context.Background(), s.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a Secret was created without its owner: %v", err)
		}
	})

	t.Run("existing ConfigMap is not a certificate", func(t *testing.T) {
		s := c.keygenSetupOf(t, projectConfigMap, nil)
		bad, err := c.cs.CoreV1().ConfigMaps(s.ns).Create(context.Background(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: s.name},
			Data:       map[string]string{"curve.cert": "written by hand\n"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res := s.publish(t, c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns))
		want := "error: ConfigMap " + s.ns + "/" + s.name + ` exists but does not hold a valid CURVE certificate in key "curve.cert"`
		if res.code != 1 || !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "left unchanged") {
			t.Errorf("want %q: %s", want, res)
		}
		if after := c.getConfigMap(t, s.ns, s.name); after.ResourceVersion != bad.ResourceVersion {
			t.Errorf("the ConfigMap was changed: resourceVersion %s -> %s", bad.ResourceVersion, after.ResourceVersion)
		}
	})

	// A Secret of that name is left alone unread, whatever it holds: the keygen Role may not read
	// Secrets. The broker pods then fail to mount it (no key curve.cert) or their brokers reject it.
	t.Run("existing Secret is not read", func(t *testing.T) {
		s := c.keygenSetupOf(t, project, nil)
		bad, err := c.cs.CoreV1().Secrets(s.ns).Create(context.Background(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: s.name},
			StringData: map[string]string{"other": "written by hand\n"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res := s.publish(t, c.kubeconfigFor(t, c.token(t, s.ns, s.account), s.ns))
		if res.code != 0 || !strings.Contains(res.stdout, "Secret "+s.ns+"/"+s.name+" exists; left unchanged and not read") {
			t.Errorf("%s", res)
		}
		if after := c.getSecret(t, s.ns, s.name); after.ResourceVersion != bad.ResourceVersion {
			t.Errorf("the Secret was changed: resourceVersion %s -> %s", bad.ResourceVersion, after.ResourceVersion)
		}
	})

	t.Run("forbidden", func(t *testing.T) {
		s := c.keygenSetupOf(t, project, nil)
		// The namespace's default ServiceAccount has no Role.
		res := s.publish(t, c.kubeconfigFor(t, c.token(t, s.ns, "default"), s.ns))
		if res.code != 1 || !strings.Contains(res.stderr, `cannot get resource "services"`) || !strings.Contains(res.stderr, "the keygen Role must allow") {
			t.Errorf("%s", res)
		}
	})

	t.Run("credentials rejected", func(t *testing.T) {
		s := c.keygenSetupOf(t, project, nil)
		res := s.publish(t, c.kubeconfigFor(t, "not-a-token", s.ns))
		if res.code != 1 || !strings.Contains(res.stderr, "rejected the credentials") {
			t.Errorf("%s", res)
		}
	})

	t.Run("API server unreachable", func(t *testing.T) {
		s := c.keygenSetupOf(t, project, nil)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "https://" + l.Addr().String()
		l.Close()
		kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
		text := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + closed + "}}]\n" +
			"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: " + s.ns + "}}]\ncurrent-context: x\n"
		if err := os.WriteFile(kubeconfig, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res := s.publish(t, kubeconfig, "--timeout", "4s")
		took := time.Since(start)
		if res.code != 1 || !strings.Contains(res.stderr, "cannot reach the Kubernetes API server at "+closed) || !strings.Contains(res.stderr, "retrying in") {
			t.Errorf("%s", res)
		}
		if took > 20*time.Second {
			t.Errorf("gave up after %s with --timeout 4s", took)
		}
	})
}
